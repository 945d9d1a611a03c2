#!/usr/bin/perl
# classic-report.pl - the SSL/TLS usage report admins paste from wiki to wiki:
# run it over a "combinedssl" access log (... %{SSL_PROTOCOL}x %{SSL_CIPHER}x at
# the end of each line) and it prints protocol and cipher shares.
# The old regex only knew SSLv2/SSLv3/TLSv1; this one also takes TLSv1.1-1.3.
#
# usage: perl classic-report.pl access_log [more logs...]   (or on stdin)
use strict;
use warnings;

my (%proto, %cipher);
my ($total, $tls, $plain) = (0, 0, 0);

while (my $line = <>) {
    $total++;
    if ($line =~ /\s(SSLv[23]|TLSv1(?:\.[0-3])?)\s+(\S+)\s*$/) {
        $tls++;
        $proto{$1}++;
        $cipher{$2}++;
    } elsif ($line =~ /\s-\s+-\s*$/) {
        $plain++;
    }
}

sub pct { my ($n, $of) = @_; return $of ? 100 * $n / $of : 0 }

printf "%-32s %10d\n", "lines", $total;
printf "%-32s %10d %7.2f%%\n", "SSL/TLS requests", $tls, pct($tls, $total);
printf "%-32s %10d %7.2f%%\n", "plain HTTP requests", $plain, pct($plain, $total);
printf "%-32s %10d %7.2f%%\n", "unrecognised lines", $total - $tls - $plain,
    pct($total - $tls - $plain, $total);

print "\nProtocols (share of SSL/TLS requests)\n";
for my $p (sort { $proto{$b} <=> $proto{$a} || $a cmp $b } keys %proto) {
    printf "  %-30s %10d %7.2f%%\n", $p, $proto{$p}, pct($proto{$p}, $tls);
}

print "\nCiphers (share of SSL/TLS requests)\n";
for my $c (sort { $cipher{$b} <=> $cipher{$a} || $a cmp $b } keys %cipher) {
    printf "  %-30s %10d %7.2f%%\n", $c, $cipher{$c}, pct($cipher{$c}, $tls);
}
