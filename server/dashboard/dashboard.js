// zkraft dashboard: polls this server's /dashboard/status.json once a second, keeps the last
// five minutes of samples in memory, and draws the members table, the tiles and two canvas
// charts. Plain JavaScript, no library, no request anywhere but this server.
"use strict";
(function () {
  const POLL_MS = 1000;
  const TIMEOUT_MS = 2500;
  const WINDOW_MS = 5 * 60 * 1000;

  const $ = (id) => document.getElementById(id);
  const samples = [];   // {t, packets, latencySum, latencyCount, fsyncCount, fsyncMicros}
  const rps = [];       // {t, v}: requests per second between two polls (null: a gap)
  const commits = [];   // {t, v}: log entries committed per second (the ensemble's writes)
  const latency = [];   // {t, v}: average latency (ms) of the requests between two polls
  let failures = 0;
  let lastOk = null;    // Date of the last answer
  let polls = 0;

  function fmt(n) {
    if (n === null || n === undefined) return "–";
    return Number(n).toLocaleString("en-US");
  }
  function fmtMs(v) {
    if (v === null || v === undefined || !isFinite(v)) return "–";
    return v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : Math.round(v).toString();
  }
  function cell(tr, text, unknown, title) {
    const td = document.createElement("td");
    td.textContent = text;
    if (unknown) td.className = "unknown";
    if (title) td.title = title;
    tr.appendChild(td);
  }

  // Rates from the difference of two samples; a counter that went down (stat_reset) is a gap.
  function record(s) {
    const now = {
      t: Date.now(), packets: s.packets_received, commit: s.commit_index, latencySum: s.latency.sum_ms,
      latencyCount: s.latency.count, fsyncCount: s.fsync.count, fsyncMicros: s.fsync.micros_total,
    };
    const prev = samples.length ? samples[samples.length - 1] : null;
    samples.push(now);
    if (prev) {
      const dt = (now.t - prev.t) / 1000;
      const dp = now.packets - prev.packets;
      const dc = now.latencyCount - prev.latencyCount;
      const ds = now.latencySum - prev.latencySum;
      const dcommit = now.commit - prev.commit;
      rps.push({ t: now.t, v: dt > 0 && dp >= 0 ? dp / dt : null });
      commits.push({ t: now.t, v: dt > 0 && dcommit >= 0 ? dcommit / dt : null });
      latency.push({ t: now.t, v: dc > 0 && ds >= 0 ? ds / dc : (dc === 0 ? 0 : null) });
    }
    const cutoff = now.t - WINDOW_MS;
    for (const a of [samples, rps, commits, latency]) {
      while (a.length && a[0].t < cutoff) a.shift();
    }
  }

  // fsync time per fsync over the last ten seconds of samples (or since start if idle).
  function fsyncAverageMs(s) {
    const last = samples[samples.length - 1];
    let first = null;
    for (const x of samples) {
      if (x.t >= last.t - 10000) { first = x; break; }
    }
    if (first && last.fsyncCount > first.fsyncCount) {
      return { ms: (last.fsyncMicros - first.fsyncMicros) / (last.fsyncCount - first.fsyncCount) / 1000,
               recent: true };
    }
    if (s.fsync.count > 0) return { ms: s.fsync.micros_total / s.fsync.count / 1000, recent: false };
    return null;
  }

  function renderHeader(s) {
    $("self").textContent = "server " + s.server_id;
    $("mode").textContent = s.mode + (s.serving ? "" : " (not serving)");
    const leader = $("leader");
    leader.dataset.leader = String(s.leader_id);
    leader.dataset.stale = "false";
    if (s.mode === "standalone") {
      leader.textContent = "leader: this server (standalone)";
      leader.className = "chip known";
    } else if (s.leader_id > 0) {
      leader.textContent = "leader: server " + s.leader_id + (s.leader_id === s.server_id ? " (this server)" : "");
      leader.className = "chip known";
    } else {
      leader.textContent = "leader: none known";
      leader.className = "chip none";
    }
    $("term").textContent = "term " + s.term;
  }

  function renderTiles(s) {
    $("tile-sessions").textContent = fmt(s.sessions);
    $("tile-connections").textContent = fmt(s.connections) + " connections here";
    $("tile-znodes").textContent = fmt(s.znodes);
    $("tile-ephemerals").textContent = fmt(s.ephemerals) + " ephemeral";
    $("tile-watches").textContent = fmt(s.watches);
    $("tile-outstanding").textContent = fmt(s.outstanding_requests) + " requests queued";
    const f = fsyncAverageMs(s);
    $("tile-fsync").textContent = f ? fmtMs(f.ms) + " ms" : "–";
    $("tile-fsync-sub").textContent = fmt(s.fsync.count) + " fsyncs, max " +
        fmtMs(s.fsync.micros_max / 1000) + " ms" + (f && !f.recent ? ", idle" : "") +
        (s.fsync.threshold_exceeded ? ", " + fmt(s.fsync.threshold_exceeded) + " slow" : "");
    $("tile-commit").textContent = fmt(s.commit_index) + " / " + fmt(s.applied_index);
    // Consensus' figures are as of its last report (50 ms at most), the applied index is exact.
    $("tile-log").textContent = "raft log to " + fmt(s.last_index) + ", snapshot at " + fmt(s.snapshot_index);
  }

  function renderMembers(s) {
    const body = document.querySelector("#members tbody");
    body.textContent = "";
    const elsewhere = "only the leader hears each member's own figures: see its dashboard";
    const figures = new Map((s.member_figures || []).map((f) => [f.id, f]));
    for (const m of s.members) {
      const f = figures.get(m.id);
      const tr = document.createElement("tr");
      tr.dataset.id = String(m.id);
      tr.dataset.role = m.role;
      const classes = [];
      if (m.role === "leader" || m.role === "standalone") classes.push("leader");
      if (m.self) classes.push("self");
      if (m.active === false) classes.push("inactive");
      tr.className = classes.join(" ");
      cell(tr, String(m.id));
      cell(tr, m.role + (m.voter ? "" : " (non-voting)"));
      // This server's own figures; on the leader, what each member last reported of itself.
      const age = f && !m.self ? "reported " + f.reported_ms_ago + " ms ago" : "";
      cell(tr, f ? fmt(f.term) : "–", !f, f ? age : elsewhere);
      cell(tr, f ? fmt(f.commit_index) : "–", !f, f ? age : elsewhere);
      cell(tr, f ? fmt(f.applied_index) : "–", !f, f ? age : elsewhere);
      const unknown = "only the leader knows this";
      cell(tr, m.match === null ? "?" : fmt(m.match), m.match === null, m.match === null ? unknown : "");
      cell(tr, m.lag === null ? "?" : fmt(m.lag), m.lag === null, m.lag === null ? unknown : "");
      cell(tr, m.active === null ? "?" : m.active ? "recent" : "lost", m.active === null,
           m.active === null ? unknown : "");
      body.appendChild(tr);
    }
    $("members-note").textContent = s.lag_known
        ? "Match: the highest log index known to be on that member; lag: this leader's last index (" +
          fmt(s.last_index) + ") minus match."
        : "Lag unknown here: only the leader tracks each member's log. Open the leader's dashboard " +
          (s.leader_id > 0 ? "(server " + s.leader_id + ") " : "") + "to see it.";
  }

  // A line chart of series [{points: [{t, v}], color}] over the time the page has seen (one
  // minute at least, WINDOW_MS at most), on a canvas sized to its CSS box.
  function drawChart(canvas, series, unit) {
    const ratio = window.devicePixelRatio || 1;
    const w = canvas.clientWidth || 600;
    const h = canvas.clientHeight || 200;
    if (canvas.width !== Math.round(w * ratio)) canvas.width = Math.round(w * ratio);
    if (canvas.height !== Math.round(h * ratio)) canvas.height = Math.round(h * ratio);
    const g = canvas.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, w, h);
    const left = 48, right = 8, top = 8, bottom = 20;
    const pw = w - left - right, ph = h - top - bottom;
    const now = Date.now();
    let oldest = now;
    for (const sr of series) if (sr.points.length) oldest = Math.min(oldest, sr.points[0].t);
    const span = Math.min(WINDOW_MS, Math.max(60000, now - oldest));
    const all = [];
    for (const sr of series) for (const p of sr.points) if (p.v !== null) all.push(p.v);
    let max = all.length ? Math.max(...all) : 0;
    max = max <= 0 ? 1 : niceCeil(max * 1.1);
    g.font = "11px system-ui, sans-serif";
    g.strokeStyle = "#dde1e8";
    g.fillStyle = "#677185";
    g.lineWidth = 1;
    for (let i = 0; i <= 4; i++) {
      const y = top + ph - (ph * i) / 4;
      g.beginPath(); g.moveTo(left, y + 0.5); g.lineTo(left + pw, y + 0.5); g.stroke();
      g.fillText(fmtAxis((max * i) / 4), 4, y + 4);
    }
    const x = (t) => left + pw - ((now - t) / span) * pw;
    const step = span > 120000 ? 60000 : span > 60000 ? 30000 : 15000;
    for (let ago = 0; ago <= span; ago += step) {
      const label = ago === 0 ? "now" : ago % 60000 === 0 ? "-" + ago / 60000 + " min" : "-" + ago / 1000 + " s";
      g.fillText(label, Math.max(left - 10, Math.min(x(now - ago) - 12, w - 28)), h - 5);
    }
    for (const sr of series) {
      g.strokeStyle = sr.color;
      g.lineWidth = 2;
      g.beginPath();
      let pen = false;
      for (const p of sr.points) {
        if (p.v === null || p.t < now - span) { pen = false; continue; }
        const px = x(p.t), py = top + ph - (p.v / max) * ph;
        if (pen) g.lineTo(px, py); else g.moveTo(px, py);
        pen = true;
      }
      g.stroke();
    }
    // The first series' latest values, for reading the figures (and for tests).
    const values = series[0].points.filter((p) => p.v !== null).map((p) => p.v);
    canvas.dataset.count = String(values.length);
    canvas.dataset.last = values.length ? String(values[values.length - 1]) : "";
    canvas.dataset.max = values.length ? String(Math.max(...values)) : "";
    canvas.dataset.recent = values.slice(-10).map((v) => v.toFixed(2)).join(" ");
    canvas.setAttribute("aria-label", unit + ": latest " + (values.length ? fmtMs(values[values.length - 1]) : "none"));
  }
  function niceCeil(v) {
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
    return 10 * p;
  }
  function fmtAxis(v) {
    if (v >= 1000) return (v / 1000).toFixed(v >= 10000 ? 0 : 1) + "k";
    return v >= 10 || v === 0 ? String(Math.round(v)) : v.toFixed(1);
  }

  function renderCharts() {
    drawChart($("chart-rps"), [{ points: rps, color: "#2b6cb0" }, { points: commits, color: "#2f855a" }],
              "requests per second");
    drawChart($("chart-latency"), [{ points: latency, color: "#c05621" }], "average latency ms");
    const r = rps.length ? rps[rps.length - 1].v : null;
    const c = commits.length ? commits[commits.length - 1].v : null;
    const l = latency.length ? latency[latency.length - 1].v : null;
    $("now-rps").textContent = r === null ? "" : fmtMs(r) + " /s";
    $("now-commits").textContent = c === null ? "" : fmtMs(c) + " /s";
    $("now-latency").textContent = l === null ? "" : fmtMs(l) + " ms";
  }

  function showBanner(text) {
    const b = $("banner");
    if (text) {
      b.textContent = text;
      b.hidden = false;
    } else {
      b.hidden = true;
      b.textContent = "";
    }
  }

  function onStatus(s) {
    failures = 0;
    lastOk = new Date();
    polls++;
    document.body.classList.remove("stale");
    document.body.dataset.polls = String(polls);
    document.body.dataset.state = "ok";
    record(s);
    renderHeader(s);
    renderTiles(s);
    renderMembers(s);
    renderCharts();
    showBanner(s.serving ? "" : "Server " + s.server_id + " is not serving clients: " +
        (s.leader_id > 0 ? "out of contact with a quorum." : "no leader known (no quorum)."));
    $("updated").textContent = "updated " + lastOk.toLocaleTimeString();
  }

  function onFailure(why) {
    failures++;
    document.body.classList.add("stale");
    document.body.dataset.state = "down";
    const since = lastOk ? " since " + lastOk.toLocaleTimeString() : "";
    showBanner("This server stopped answering" + since + " (" + why + "; " + failures +
        " failed poll" + (failures === 1 ? "" : "s") + "). The figures below are its last answer.");
    // The time axis keeps moving: the charts show the gap.
    rps.push({ t: Date.now(), v: null });
    commits.push({ t: Date.now(), v: null });
    latency.push({ t: Date.now(), v: null });
    samples.length = 0;  // rates restart from the next answer
    // Who leads is not known from here any more: the last answer's leader, said to be that.
    const leader = $("leader");
    leader.className = "chip none";
    if (leader.dataset.leader && leader.dataset.leader !== "0") {
      leader.textContent = "leader at its last answer: server " + leader.dataset.leader;
    }
    leader.dataset.stale = "true";
    renderCharts();
  }

  async function poll() {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), TIMEOUT_MS);
    try {
      const r = await fetch("/dashboard/status.json", { cache: "no-store", signal: abort.signal });
      let body = null;
      try { body = await r.json(); } catch (e) { body = null; }
      if (!r.ok || !body) {
        onFailure(body && body.error ? body.error : "HTTP " + r.status);
      } else {
        onStatus(body);
      }
    } catch (e) {
      onFailure(e.name === "AbortError" ? "no answer within " + TIMEOUT_MS + " ms" : "connection failed");
    } finally {
      clearTimeout(timer);
      setTimeout(poll, POLL_MS);
    }
  }

  window.addEventListener("resize", renderCharts);
  poll();
})();
