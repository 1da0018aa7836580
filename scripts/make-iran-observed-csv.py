#!/usr/bin/env python3
"""Writes data/sightings/iran-observed.csv from the roozbehp/qamari data (CC0).

Usage:
    python3 scripts/make-iran-observed-csv.py QAMARI_CHECKOUT -o data/sightings/iran-observed.csv
    python3 scripts/make-iran-observed-csv.py path/to/consolidated.txt [more files ...] -o OUT.csv

A directory argument stands for its consolidated.txt (the upstream's own reconciled list of all its
sources). File arguments are read as they are; they must use qamari's line format, which both
consolidated.txt and the files under sources/ (except sources/tsybulsky.txt) use:

    [*]YEAR/MONTH YYYY-MM-DD [# comment]

YEAR/MONTH is the lunar Hijri (AH) month and YYYY-MM-DD the Gregorian date of its first day. A leading
asterisk marks a month whose observed start differed from the calendar published beforehand; the date
given is then the observed one. The CSV keeps the date and drops the asterisk (data/sightings/README.md
lists those months).

The output is deterministic: rows sorted by (year, month), LF line endings, no trailing spaces. Without -o
the CSV goes to standard output. The script refuses (exit status 1) a month given two different dates, a
malformed line, and two consecutive months that are not 29 or 30 days apart. Python 3 standard library only.
"""

import argparse
import datetime
import os
import re
import sys

LINE_RE = re.compile(r"^(\*?)(\d{1,4})/(\d{1,2})\s+(\d{4}-\d{2}-\d{2})$", re.ASCII)
HEADER = "hijri_year,hijri_month,first_day"


def fail(message):
    print("make-iran-observed-csv: " + message, file=sys.stderr)
    sys.exit(1)


def source_files(arguments):
    files = []
    for argument in arguments:
        if os.path.isdir(argument):
            path = os.path.join(argument, "consolidated.txt")
            if not os.path.isfile(path):
                fail("%s has no consolidated.txt: is it a checkout of roozbehp/qamari?" % argument)
            files.append(path)
        elif os.path.isfile(argument):
            files.append(argument)
        else:
            fail("no such file or directory: %s" % argument)
    return files


def read_months(paths):
    """Returns {(year, month): (date, starred, where)} from every line of every file."""
    months = {}
    for path in paths:
        with open(path, "rt", encoding="utf-8") as source:
            for number, raw in enumerate(source, start=1):
                line = raw.split("#", 1)[0].strip()
                if not line:
                    continue
                where = "%s:%d" % (os.path.basename(path), number)
                match = LINE_RE.match(line)
                if not match:
                    fail("%s: not a '[*]YEAR/MONTH YYYY-MM-DD' line: %r" % (where, raw.rstrip("\n")))
                star, year, month, iso = match.groups()
                year, month = int(year), int(month)
                if not 1 <= month <= 12:
                    fail("%s: month %d is not 1 to 12" % (where, month))
                try:
                    date = datetime.date.fromisoformat(iso)
                except ValueError:
                    fail("%s: %s is not a Gregorian date" % (where, iso))
                key = (year, month)
                if key in months:
                    if months[key][0] != date:
                        fail("%d/%d is %s in %s but %s in %s" % (
                            year, month, months[key][0], months[key][2], date, where))
                    months[key] = (date, months[key][1] or star == "*", months[key][2])
                else:
                    months[key] = (date, star == "*", where)
    return months


def check_lengths(months):
    for (year, month), (date, _, where) in months.items():
        following = (year + 1, 1) if month == 12 else (year, month + 1)
        if following in months:
            days = (months[following][0] - date).days
            if days not in (29, 30):
                fail("%d/%d (%s) lasts %d days until %d/%d (%s)" % (
                    year, month, where, days, following[0], following[1], months[following][2]))


def csv_text(months):
    lines = [HEADER]
    for (year, month) in sorted(months):
        lines.append("%d,%d,%s" % (year, month, months[(year, month)][0].isoformat()))
    return "\n".join(lines) + "\n"


def summary(months):
    keys = sorted(months)
    ranges = []  # runs of consecutive months
    for key in keys:
        index = key[0] * 12 + key[1] - 1
        if ranges and ranges[-1][1] == index - 1:
            ranges[-1][1] = index
        else:
            ranges.append([index, index])
    def name(index):
        return "%d/%d" % (index // 12, index % 12 + 1)
    runs = ", ".join("%s-%s (%d)" % (name(a), name(b), b - a + 1) for a, b in ranges)
    starred = ", ".join("%d/%d" % key for key in keys if months[key][1])
    return "%d months: %s; starred (observed start differed from the published calendar): %s" % (
        len(keys), runs, starred or "none")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+", metavar="SOURCE",
                        help="a roozbehp/qamari checkout (its consolidated.txt is read) or qamari-format files")
    parser.add_argument("-o", "--output", help="where to write the CSV (default: standard output)")
    arguments = parser.parse_args()

    months = read_months(source_files(arguments.sources))
    if not months:
        fail("no months found")
    check_lengths(months)
    text = csv_text(months)
    if arguments.output:
        with open(arguments.output, "wt", encoding="utf-8", newline="\n") as output:
            output.write(text)
    else:
        sys.stdout.write(text)
    print(summary(months), file=sys.stderr)


if __name__ == "__main__":
    main()
