#!/bin/bash
# lower.sh
echo "$1" | tr a-z A-Z
