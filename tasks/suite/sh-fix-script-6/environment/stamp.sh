#!/bin/bash
# stamp.sh
echo "[$1] "$2
