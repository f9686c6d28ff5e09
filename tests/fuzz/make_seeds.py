#!/usr/bin/python3
"""Turns the golden transcripts (tests/jute/golden/*.frames) into libFuzzer seeds for fuzz_jute.

Seed layout (see fuzz_jute.cc): mode byte, then for requests/replies 0x80 + the op (4 bytes BE).
    make_seeds.py <golden dir> <seed dir>
"""
import os
import struct
import sys


def main(golden, out):
    os.makedirs(out, exist_ok=True)
    n = 0

    def put(data):
        nonlocal n
        with open(os.path.join(out, "seed-%04d" % n), "wb") as f:
            f.write(data)
        n += 1

    for name in sorted(os.listdir(golden)):
        if not name.endswith(".frames"):
            continue
        frames = []
        with open(os.path.join(golden, name)) as f:
            for line in f:
                if line[:2] in ("> ", "< "):
                    frames.append((line[0], bytes.fromhex(line[2:].strip())))
        op_of_xid = {-2: 11, -4: 100, -8: 101}
        seen_req = seen_resp = False
        stream = b""
        for d, body in frames:
            if d == ">":
                stream += struct.pack(">i", len(body)) + body
            if d == ">" and not seen_req:
                seen_req = True
                put(b"\x00" + body)
            elif d == "<" and not seen_resp:
                seen_resp = True
                put(b"\x00" + body)
            elif d == ">":
                xid, op = struct.unpack(">ii", body[:8])
                op_of_xid[xid] = op
                put(b"\x02\x80" + struct.pack(">i", op) + body[:4] + body[8:])
            else:
                (xid,) = struct.unpack(">i", body[:4])
                op = op_of_xid.get(xid, 0)
                put(b"\x03\x80" + struct.pack(">i", op) + body)
        put(b"\x01\xff\x07" + stream)
    print("%d seeds" % n)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
