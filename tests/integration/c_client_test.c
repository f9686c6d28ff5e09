/*
 * The ZooKeeper C client (libzookeeper_mt 3.8, synchronous API) against one server:
 * connect, create (and create2 with a Stat), get, set, exists with a watch and receive the event,
 * get_children (plus a child watch), delete, multi.
 *
 * Usage: c_client_test host:port   (run by test_c_client.py, which starts the server)
 *        c_client_test host:port --restart
 *          session and watches across a server restart: prints READY, waits for a line on stdin
 *          (the driver restarts the server meanwhile), then checks that the client reconnected
 *          into the same session and that its watches (re-sent with SetWatches) still fire.
 *        c_client_test host:port --read-only PATH
 *          against a server in read-only mode: connects with ZOO_READONLY, expects the read-only
 *          state, reads PATH (which must hold "x"), and expects ZNOTREADONLY for writes.
 * Prints one line per failed check and a final "N passed, M failed"; exits 0 only if all passed.
 */
#include <zookeeper/zookeeper.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int passed;
static int failed;

#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (cond) {                                        \
            passed++;                                      \
        } else {                                           \
            failed++;                                      \
            printf("FAILED CHECK (line %d): ", __LINE__);  \
            printf(__VA_ARGS__);                           \
            printf("\n");                                  \
        }                                                  \
    } while (0)

/* Watch events and session state, handed from the client's completion thread to main. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int connected;
static int connects; /* how many times the session reached ZOO_CONNECTED_STATE */
static int read_only_connected; /* the session is in ZOO_READONLY_STATE */
#define MAX_EVENTS 16
static struct {
    int type;
    char path[256];
} events[MAX_EVENTS];
static int n_events;

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
    (void)zh;
    (void)ctx;
    pthread_mutex_lock(&mu);
    if (type == ZOO_SESSION_EVENT) {
        connected = (state == ZOO_CONNECTED_STATE);
        read_only_connected = (state == ZOO_READONLY_STATE);
        if (connected) connects++;
    } else if (n_events < MAX_EVENTS) {
        events[n_events].type = type;
        snprintf(events[n_events].path, sizeof events[n_events].path, "%s", path ? path : "");
        n_events++;
    }
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void deadline_in(struct timespec *ts, int seconds) {
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += seconds;
}

/* Waits (up to 15 s) for the next watch event; returns its type or -1 on timeout. */
static int next_event(char *path_out, size_t len) {
    static int consumed;
    struct timespec ts;
    int type = -1;
    deadline_in(&ts, 15);
    pthread_mutex_lock(&mu);
    while (consumed >= n_events) {
        if (pthread_cond_timedwait(&cv, &mu, &ts) != 0) break;
    }
    if (consumed < n_events) {
        type = events[consumed].type;
        snprintf(path_out, len, "%s", events[consumed].path);
        consumed++;
    }
    pthread_mutex_unlock(&mu);
    return type;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Waits up to `seconds` for the session to have connected at least `n` times; 1 if it did. */
static int wait_connects(int n, int seconds) {
    struct timespec ts;
    deadline_in(&ts, seconds);
    pthread_mutex_lock(&mu);
    while (!(connected && connects >= n)) {
        if (pthread_cond_timedwait(&cv, &mu, &ts) != 0) break;
    }
    int ok = connected && connects >= n;
    pthread_mutex_unlock(&mu);
    return ok;
}

/* zoo_add_auth, waited for: its completion's rc, or ZOPERATIONTIMEOUT after 10 s. */
static int auth_calls = 0, auth_rc = ZOK;
static void auth_completion(int rc, const void *data) {
    (void)data;
    pthread_mutex_lock(&mu);
    auth_rc = rc;
    ++auth_calls;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}
static int add_auth_sync(zhandle_t *zh, const char *scheme, const char *cert, int len) {
    pthread_mutex_lock(&mu);
    int before = auth_calls;
    pthread_mutex_unlock(&mu);
    int rc = zoo_add_auth(zh, scheme, cert, len, auth_completion, NULL);
    if (rc != ZOK) return rc;
    struct timespec ts;
    deadline_in(&ts, 10);
    pthread_mutex_lock(&mu);
    while (auth_calls == before) {
        if (pthread_cond_timedwait(&cv, &mu, &ts) != 0) break;
    }
    rc = auth_calls == before ? ZOPERATIONTIMEOUT : auth_rc;
    pthread_mutex_unlock(&mu);
    return rc;
}

static void ignore_events(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
    (void)zh; (void)type; (void)state; (void)path; (void)ctx;
}

static int restart_check(const char *hosts) {
    zhandle_t *zh = zookeeper_init(hosts, watcher, 30000, NULL, NULL, 0);
    CHECK(zh != NULL && wait_connects(1, 20), "connected");
    if (!zh) return 1;
    char buf[256];
    struct Stat st;
    struct String_vector kids;
    CHECK(zoo_create(zh, "/c-restart", "0", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, buf, sizeof buf) == ZOK,
          "create /c-restart");
    CHECK(zoo_create(zh, "/c-restart/eph", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, buf, sizeof buf) == ZOK,
          "create ephemeral");
    CHECK(zoo_exists(zh, "/c-restart", 1, &st) == ZOK, "exists with watch");
    CHECK(zoo_get_children(zh, "/c-restart", 1, &kids) == ZOK, "get_children with watch");
    deallocate_String_vector(&kids);
    int64_t session = zoo_client_id(zh)->client_id;

    printf("READY\n");
    fflush(stdout);
    char line[64];
    CHECK(fgets(line, sizeof line, stdin) != NULL, "driver answered");

    CHECK(wait_connects(2, 30), "reconnected after the restart");
    CHECK(zoo_client_id(zh)->client_id == session, "same session after the restart");
    CHECK(zoo_exists(zh, "/c-restart/eph", 0, &st) == ZOK && st.ephemeralOwner == session,
          "own ephemeral survived the restart");

    zhandle_t *other = zookeeper_init(hosts, ignore_events, 30000, NULL, NULL, 0);
    int rc = ZCONNECTIONLOSS;
    for (int i = 0; i < 100 && rc == ZCONNECTIONLOSS; i++) { /* until it has connected */
        rc = zoo_set(other, "/c-restart", "1", 1, -1);
        if (rc == ZCONNECTIONLOSS || rc == ZINVALIDSTATE) {
            rc = ZCONNECTIONLOSS;
            struct timespec pause = {0, 100 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
    }
    CHECK(rc == ZOK, "other client set rc=%d", rc);
    rc = zoo_create(other, "/c-restart/new", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, buf, sizeof buf);
    CHECK(rc == ZOK, "other client create rc=%d", rc);
    zookeeper_close(other);

    int saw_changed = 0, saw_child = 0;
    for (int i = 0; i < 2; i++) {
        char path[256];
        int type = next_event(path, sizeof path);
        if (type == ZOO_CHANGED_EVENT && strcmp(path, "/c-restart") == 0) saw_changed = 1;
        if (type == ZOO_CHILD_EVENT && strcmp(path, "/c-restart") == 0) saw_child = 1;
    }
    CHECK(saw_changed, "data watch set before the restart fired");
    CHECK(saw_child, "child watch set before the restart fired");
    zoo_delete(zh, "/c-restart/new", -1);
    zoo_delete(zh, "/c-restart/eph", -1);
    zoo_delete(zh, "/c-restart", -1);
    zookeeper_close(zh);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

static int read_only_check(const char *hosts, const char *path) {
    zhandle_t *zh = zookeeper_init(hosts, watcher, 10000, NULL, NULL, ZOO_READONLY);
    CHECK(zh != NULL, "zookeeper_init");
    if (!zh) return 1;
    struct timespec ts;
    deadline_in(&ts, 30);
    pthread_mutex_lock(&mu);
    while (!read_only_connected) {
        if (pthread_cond_timedwait(&cv, &mu, &ts) != 0) break;
    }
    int ro = read_only_connected;
    pthread_mutex_unlock(&mu);
    CHECK(ro, "connected in read-only state");
    CHECK(zoo_state(zh) == ZOO_READONLY_STATE, "zoo_state %d", zoo_state(zh));
    char buf[64];
    int len = sizeof buf;
    struct Stat st;
    int rc = zoo_get(zh, path, 0, buf, &len, &st);
    CHECK(rc == ZOK && len == 1 && buf[0] == 'x', "read rc=%d len=%d", rc, len);
    rc = zoo_create(zh, "/c-read-only", "y", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, buf, sizeof buf);
    CHECK(rc == ZNOTREADONLY, "create rc=%d", rc);
    rc = zoo_set(zh, path, "z", 1, -1);
    CHECK(rc == ZNOTREADONLY, "set rc=%d", rc);
    rc = zoo_delete(zh, path, -1);
    CHECK(rc == ZNOTREADONLY, "delete rc=%d", rc);
    rc = zoo_exists(zh, "/c-read-only", 0, &st);
    CHECK(rc == ZNONODE, "exists after refused create rc=%d", rc);
    zookeeper_close(zh);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[2], "--read-only") == 0) {
        zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
        return read_only_check(argv[1], argv[3]);
    }
    if (argc == 3 && strcmp(argv[2], "--restart") == 0) {
        zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
        return restart_check(argv[1]);
    }
    if (argc != 2) {
        fprintf(stderr, "usage: %s host:port [--restart | --read-only PATH]\n", argv[0]);
        return 2;
    }
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
    zhandle_t *zh = zookeeper_init(argv[1], watcher, 10000, NULL, NULL, 0);
    if (!zh) {
        printf("zookeeper_init failed\n0 passed, 1 failed\n");
        return 1;
    }
    struct timespec ts;
    deadline_in(&ts, 20);
    pthread_mutex_lock(&mu);
    while (!connected) {
        if (pthread_cond_timedwait(&cv, &mu, &ts) != 0) break;
    }
    int ok = connected;
    pthread_mutex_unlock(&mu);
    CHECK(ok, "connected within 20 s");
    if (!ok) {
        printf("%d passed, %d failed\n", passed, failed);
        return 1;
    }
    const clientid_t *cid = zoo_client_id(zh);
    CHECK(cid->client_id != 0, "session id assigned");

    char buf[512];
    int buflen;
    struct Stat st;
    char evpath[256];
    int rc;

    rc = zoo_create(zh, "/c-client", "hello", 5, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, buf, sizeof buf);
    CHECK(rc == ZOK && strcmp(buf, "/c-client") == 0, "create rc=%d path=%s", rc, buf);
    rc = zoo_create(zh, "/c-client", "x", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, buf, sizeof buf);
    CHECK(rc == ZNODEEXISTS, "create existing rc=%d", rc);

    buflen = sizeof buf;
    rc = zoo_get(zh, "/c-client", 0, buf, &buflen, &st);
    CHECK(rc == ZOK && buflen == 5 && memcmp(buf, "hello", 5) == 0, "get rc=%d len=%d", rc, buflen);
    CHECK(st.version == 0 && st.dataLength == 5 && st.czxid == st.mzxid && st.czxid > 0,
          "get stat version=%d dataLength=%d", st.version, st.dataLength);

    rc = zoo_set(zh, "/c-client", "world!", 6, 0);
    CHECK(rc == ZOK, "set rc=%d", rc);
    rc = zoo_set(zh, "/c-client", "nope", 4, 0);
    CHECK(rc == ZBADVERSION, "set bad version rc=%d", rc);
    buflen = sizeof buf;
    rc = zoo_get(zh, "/c-client", 0, buf, &buflen, &st);
    CHECK(rc == ZOK && buflen == 6 && memcmp(buf, "world!", 6) == 0 && st.version == 1,
          "get after set rc=%d len=%d version=%d", rc, buflen, st.version);

    /* create2 returns the Stat of the new node */
    struct Stat st2;
    rc = zoo_create2(zh, "/c-client/seq-", "s", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT_SEQUENTIAL,
                     buf, sizeof buf, &st2);
    CHECK(rc == ZOK && strcmp(buf, "/c-client/seq-0000000000") == 0, "create2 seq rc=%d path=%s", rc, buf);
    CHECK(st2.czxid > st.mzxid && st2.dataLength == 1 && st2.version == 0, "create2 stat czxid=%lld",
          (long long)st2.czxid);

    /* exists with a watch on a missing node, then create it: NodeCreated */
    rc = zoo_exists(zh, "/c-client/w", 1, &st);
    CHECK(rc == ZNONODE, "exists missing rc=%d", rc);
    rc = zoo_create(zh, "/c-client/w", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, buf, sizeof buf);
    CHECK(rc == ZOK, "create ephemeral rc=%d", rc);
    int type = next_event(evpath, sizeof evpath);
    CHECK(type == ZOO_CREATED_EVENT && strcmp(evpath, "/c-client/w") == 0, "created event type=%d path=%s",
          type, evpath);
    rc = zoo_exists(zh, "/c-client/w", 1, &st);
    CHECK(rc == ZOK && st.ephemeralOwner == cid->client_id && st.dataLength == 0, "exists ephemeral rc=%d", rc);
    rc = zoo_set(zh, "/c-client/w", "d", 1, -1);
    CHECK(rc == ZOK, "set watched rc=%d", rc);
    type = next_event(evpath, sizeof evpath);
    CHECK(type == ZOO_CHANGED_EVENT && strcmp(evpath, "/c-client/w") == 0, "changed event type=%d path=%s",
          type, evpath);

    /* children, with a child watch */
    struct String_vector kids;
    rc = zoo_get_children(zh, "/c-client", 1, &kids);
    CHECK(rc == ZOK && kids.count == 2, "get_children rc=%d count=%d", rc, rc == ZOK ? kids.count : -1);
    if (rc == ZOK) {
        qsort(kids.data, kids.count, sizeof(char *), cmp_str);
        CHECK(kids.count == 2 && strcmp(kids.data[0], "seq-0000000000") == 0 && strcmp(kids.data[1], "w") == 0,
              "children names");
        deallocate_String_vector(&kids);
    }
    rc = zoo_delete(zh, "/c-client/seq-0000000000", 0);
    CHECK(rc == ZOK, "delete seq rc=%d", rc);
    type = next_event(evpath, sizeof evpath);
    CHECK(type == ZOO_CHILD_EVENT && strcmp(evpath, "/c-client") == 0, "child event type=%d path=%s", type, evpath);

    rc = zoo_delete(zh, "/c-client", -1);
    CHECK(rc == ZNOTEMPTY, "delete non-empty rc=%d", rc);

    /* multi: delete the ephemeral and set the parent atomically; then a failing one */
    zoo_op_t ops[2];
    zoo_op_result_t results[2];
    zoo_delete_op_init(&ops[0], "/c-client/w", -1);
    zoo_set_op_init(&ops[1], "/c-client", "m", 1, 1, &st2);
    rc = zoo_multi(zh, 2, ops, results);
    CHECK(rc == ZOK && results[0].err == ZOK && results[1].err == ZOK, "multi rc=%d", rc);
    zoo_create_op_init(&ops[0], "/c-client/never", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, buf, sizeof buf);
    zoo_delete_op_init(&ops[1], "/c-client/missing", -1);
    rc = zoo_multi(zh, 2, ops, results);
    CHECK(rc == ZNONODE && results[0].err == ZOK && results[1].err == ZNONODE, "failing multi rc=%d errs=%d,%d",
          rc, results[0].err, results[1].err);
    rc = zoo_exists(zh, "/c-client/never", 0, &st);
    CHECK(rc == ZNONODE, "failing multi rolled back rc=%d", rc);

    rc = zoo_delete(zh, "/c-client", 2);
    CHECK(rc == ZOK, "delete rc=%d", rc);
    rc = zoo_exists(zh, "/c-client", 0, &st);
    CHECK(rc == ZNONODE, "deleted rc=%d", rc);
    buflen = sizeof buf;
    rc = zoo_get(zh, "/c-client", 0, buf, &buflen, &st);
    CHECK(rc == ZNONODE, "get deleted rc=%d", rc);

    /* addauth as ZooKeeper's providers answer it: digest digests any credential (an empty one
       too), ip ignores its data; both are OK and the connection stays. */
    rc = add_auth_sync(zh, "digest", "", 0);
    CHECK(rc == ZOK, "digest auth with an empty credential rc=%d", rc);
    rc = add_auth_sync(zh, "ip", "", 0);
    CHECK(rc == ZOK, "ip auth rc=%d", rc);
    rc = zoo_exists(zh, "/", 0, &st);
    CHECK(rc == ZOK, "still connected after the auths rc=%d", rc);

    rc = zookeeper_close(zh);
    CHECK(rc == ZOK, "close rc=%d", rc);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
