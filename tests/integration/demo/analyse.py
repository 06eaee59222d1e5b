"""A real program for the sandbox: read a CSV from the working folder, write a summary there.

usage: analyse.py DATA.csv OUT.txt
"""
import csv
import statistics
import sys

with open(sys.argv[1], newline="") as f:
    rows = list(csv.DictReader(f))
values = [float(r["value"]) for r in rows]
summary = "rows %d, total %.2f, mean %.2f, max %s\n" % (
    len(values),
    sum(values),
    statistics.mean(values),
    max(rows, key=lambda r: float(r["value"]))["name"],
)
with open(sys.argv[2], "w") as f:
    f.write(summary)
print("wrote %s: %s" % (sys.argv[2], summary.strip()))
