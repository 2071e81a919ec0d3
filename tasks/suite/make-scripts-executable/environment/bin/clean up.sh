#!/bin/bash
echo cleaning
