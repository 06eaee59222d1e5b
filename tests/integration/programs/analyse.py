# Reads a CSV of (name, count) rows, prints a summary and draws the counts as a bar chart in
# ./out.png, with the standard library only (csv, zlib, struct).
import csv
import struct
import sys
import zlib


def png(path, width, height, pixel):
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(
        b"\0" + bytes(pixel(x, y) for x in range(width)) for y in range(height)
    )
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(rows)))
        f.write(chunk(b"IEND", b""))


with open(sys.argv[1], newline="") as f:
    rows = [(r["name"], int(r["count"])) for r in csv.DictReader(f)]
total = sum(c for _, c in rows)
top = max(rows, key=lambda r: r[1])
print(f"rows={len(rows)} total={total} max={top[0]}")
bar, height = 10, max(c for _, c in rows)
png(
    "out.png",
    bar * len(rows),
    height,
    lambda x, y: 0 if height - y <= rows[x // bar][1] else 255,
)
