#!/usr/bin/perl
# build/sources.h (Makefile): each file named on the command line as a C
# array of its bytes, 16 a line, then the table shipped_files of their
# names and sizes (orchestrator/deploy.c uploads them).  One process for
# every file: an od and a sed a file took seconds of processor time at
# every build of a tree whose kernels/ changed.
use strict;
use warnings;

my $i = 0;
for my $f (@ARGV) {
	open(my $h, "<:raw", $f) or die "embed.pl: \"$f\": $!\n";
	my $d = do { local $/; <$h> } // "";
	close($h);
	print "static const unsigned char src_$i\[] = {\n";
	for (my $o = 0; $o < length $d; $o += 16) {
		print map({ sprintf " 0x%02x,", $_ }
		    unpack("C*", substr($d, $o, 16))), "\n";
	}
	print "0 };\n";
	$i++;
}
print "static const struct shipped_file shipped_files[] = {\n";
$i = 0;
for my $f (@ARGV) {
	print "{ \"$f\", src_$i, sizeof src_$i - 1 },\n";
	$i++;
}
print "{ 0, 0, 0 } };\n";
