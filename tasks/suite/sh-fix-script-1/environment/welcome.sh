#!/bin/bash
# welcome.sh
echo "Welcome, $2!"
