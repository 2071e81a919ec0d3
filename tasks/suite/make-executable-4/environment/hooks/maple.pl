#!/usr/bin/perl
# hooks/maple.pl
