#!/bin/bash
# last.sh
echo "$1"
