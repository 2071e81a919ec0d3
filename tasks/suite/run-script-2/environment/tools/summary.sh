#!/bin/bash
# reads data.txt from the current folder
echo "lines: $(wc -l < data.txt)"
sort data.txt
