#!/bin/bash
# ci/harbor.sh
