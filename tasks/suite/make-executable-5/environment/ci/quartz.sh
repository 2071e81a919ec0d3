#!/bin/bash
# ci/quartz.sh
