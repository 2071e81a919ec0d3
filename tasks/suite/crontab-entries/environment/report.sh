#!/bin/bash
echo report
