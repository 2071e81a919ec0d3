#!/bin/bash
echo backing up
