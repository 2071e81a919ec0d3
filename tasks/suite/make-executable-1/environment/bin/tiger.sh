#!/bin/bash
# bin/tiger.sh
