#!/usr/bin/python3
# Run as ./tool.py: the kernel reads the "#!" line and runs the interpreter on this file.
import sys

print("tool.py argv:" + " ".join(sys.argv[1:]))
