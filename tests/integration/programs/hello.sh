#!/bin/bash
# Run as ./hello.sh: a "#!" script.
echo "hello.sh ${BASH_VERSINFO[0]} $*"
