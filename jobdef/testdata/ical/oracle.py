"""Expected exclusions of the iCalendar files of this directory.

Written apart from the importer (jobdef/ical*.go): each file's events are
expanded here by hand with the standard library (datetime, zoneinfo), and
the instants at the edges of every excluded span are written to
NAME.want as "INSTANT true|false" (Excludes at that instant). Run
"python3 oracle.py" in this directory after changing a file or its
expansion below.
"""
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

UTC = timezone.utc


def local(zone, *a):
    return datetime(*a, tzinfo=ZoneInfo(zone)).astimezone(UTC)


def days(zone, d, n=1):
    """The span of n local dates from d in zone."""
    z = ZoneInfo(zone)
    s = datetime(d.year, d.month, d.day, tzinfo=z)
    e = s + timedelta(days=n)  # wall-clock arithmetic on aware datetimes
    return (s.astimezone(UTC), e.astimezone(UTC))


def weekly(first, n, step=7):
    return [first + timedelta(days=step * k) for k in range(n)]


def recurrence_set():
    """recurrence-set.ics, in a calendar of zone UTC."""
    ny = "America/New_York"
    spans, gone = [], []
    mondays = weekly(date(2026, 10, 5), 8)
    fifteenths = [date(2026, 10, 15), date(2026, 11, 15), date(2026, 12, 15)]
    exdates = {date(2026, 10, 19), date(2026, 11, 2), date(2026, 11, 16)}
    exrule = {date(2026, 10, 15), date(2026, 11, 15)}
    for d in sorted(set(mondays + fifteenths)):
        s = local(ny, d.year, d.month, d.day, 9)
        if d in exdates or d in exrule:
            gone.append(s)
            continue
        spans.append((s, s + timedelta(hours=1)))
    s = local(ny, 2026, 12, 31, 9)
    spans.append((s, s + timedelta(hours=1)))
    s = datetime(2027, 1, 5, 15, tzinfo=UTC)
    spans.append((s, s + timedelta(hours=3)))
    s = datetime(2027, 1, 6, 15, tzinfo=UTC)
    spans.append((s, s + timedelta(minutes=30)))
    for y in range(2026, 2031):
        if y == 2028:
            gone.append(days("UTC", date(y, 5, 1))[0])
            continue
        spans.append(days("UTC", date(y, 5, 1)))
    for y in (2026, 2027):
        spans.append(days("UTC", date(y, 5, 2)))
    return spans, gone


def recurrence_id():
    """recurrence-id.ics, in a calendar of zone Europe/Berlin."""
    be = "Europe/Berlin"
    spans, gone = [], []
    until = datetime(2026, 12, 1, 13, tzinfo=UTC)
    d = date(2026, 10, 6)
    while local(be, d.year, d.month, d.day, 14) <= until:
        s = local(be, d.year, d.month, d.day, 14)
        if d in (date(2026, 10, 20), date(2026, 11, 10)):
            gone.append(s)
        else:
            spans.append((s, s + timedelta(hours=2)))
        d += timedelta(days=7)
    spans.append((local(be, 2026, 10, 21, 9), local(be, 2026, 10, 21, 12)))
    for d in weekly(date(2026, 10, 7), 4) + [date(2026, 10, 15), date(2026, 12, 3)]:
        gone.append(days(be, d)[0])
    spans.append(days(be, date(2026, 12, 2)))
    return spans, gone


def write(name, spans, gone):
    def excluded(t):
        return any(s <= t < e for s, e in spans)

    probes = set(gone)
    for s, e in spans:
        probes |= {s, e - timedelta(seconds=1), e, s - timedelta(seconds=1)}
    with open(name + ".want", "w") as f:
        for t in sorted(probes):
            f.write("%s %s\n" % (t.strftime("%Y-%m-%dT%H:%M:%SZ"), str(excluded(t)).lower()))


write("recurrence-set", *recurrence_set())
write("recurrence-id", *recurrence_id())
