#!/bin/bash
# ci/anchor.sh
