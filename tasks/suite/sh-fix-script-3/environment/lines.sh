#!/bin/bash
# lines.sh
wc -l $1
