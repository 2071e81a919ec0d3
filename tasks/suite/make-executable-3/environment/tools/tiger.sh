#!/bin/bash
# tools/tiger.sh
