#!/bin/bash
# bin/velvet.sh
