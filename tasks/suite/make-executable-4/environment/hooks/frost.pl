#!/usr/bin/perl
# hooks/frost.pl
