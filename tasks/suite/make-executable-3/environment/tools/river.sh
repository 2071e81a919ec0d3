#!/bin/bash
# tools/river.sh
