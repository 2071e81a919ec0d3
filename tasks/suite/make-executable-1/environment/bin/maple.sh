#!/bin/bash
# bin/maple.sh
