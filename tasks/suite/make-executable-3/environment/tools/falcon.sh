#!/bin/bash
# tools/falcon.sh
