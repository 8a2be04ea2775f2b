#!/usr/bin/env perl
#
# Copyright (c) 2026 The pnbc developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Generate the build system: ./autogen.pl && ./configure && make

use strict;
use warnings;
use File::Basename qw(dirname);
use Cwd qw(abs_path);

my $top = dirname(abs_path($0));
chdir($top) or die "autogen.pl: cannot chdir to $top: $!\n";

foreach my $tool (qw(autoreconf autoconf automake libtoolize)) {
    my $found = grep { -x "$_/$tool" } split(/:/, $ENV{PATH} // '');
    die "autogen.pl: '$tool' not found in PATH; install autoconf, automake and libtool\n"
        . "  (Debian: apt-get install autoconf automake libtool, or contrib/install-deps.sh)\n"
        unless $found;
}

# Other people's Makefile.am files that configure.ac needs: create an
# empty placeholder only while they do not exist yet.
foreach my $dir (qw(test contrib)) {
    my $am = "$dir/Makefile.am";
    next if -e $am;
    mkdir($dir) unless -d $dir;
    open(my $fh, '>', $am) or die "autogen.pl: cannot create $am: $!\n";
    print $fh "# Placeholder created by autogen.pl; replace with the real $am.\n";
    close($fh);
    print "autogen.pl: created placeholder $am\n";
}

mkdir('build-aux') unless -d 'build-aux';

my @cmd = ('autoreconf', '-ivf');
print "autogen.pl: running @cmd\n";
system(@cmd) == 0 or die "autogen.pl: '@cmd' failed\n";

print "autogen.pl: done; now run ./configure && make\n";
exit 0;
