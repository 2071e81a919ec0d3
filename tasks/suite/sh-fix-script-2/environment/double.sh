#!/bin/bash
# double.sh
echo $(( $1 + 2 ))
