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


def series(zone, first, hour, until, step=7):
    """The dates from first, step days apart, whose hour in zone is not
    after the instant until (an RRULE's UNTIL)."""
    out, d = [], first
    while local(zone, d.year, d.month, d.day, hour) <= until:
        out.append(d)
        d += timedelta(days=step)
    return out


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
    be = ZoneInfo("Europe/Berlin")
    for d in weekly(date(2026, 10, 17), 3):
        s = datetime(d.year, d.month, d.day, 12, tzinfo=be)
        # Aware datetimes in one zone add wall time: 25 hours on 24/25 October.
        spans.append((s.astimezone(UTC), (s + timedelta(days=1, hours=1)).astimezone(UTC)))
    s = datetime(2026, 10, 24, tzinfo=be)
    spans.append((s.astimezone(UTC), (s + timedelta(days=1)).astimezone(UTC)))
    return spans, gone


def recurrence_id():
    """recurrence-id.ics, in a calendar of zone Europe/Berlin. A
    RANGE=THISANDFUTURE override moves the instances from its own on by
    the same wall time (12:00 also after the clocks go back)."""
    be = "Europe/Berlin"
    spans, gone = [], []
    until = datetime(2026, 12, 1, 13, tzinfo=UTC)
    for d in series(be, date(2026, 10, 6), 14, until):
        s = local(be, d.year, d.month, d.day, 14)
        if d in (date(2026, 10, 20), date(2026, 11, 10)):
            gone.append(s)
        else:
            spans.append((s, s + timedelta(hours=2)))
    spans.append((local(be, 2026, 10, 21, 9), local(be, 2026, 10, 21, 12)))
    for d in weekly(date(2026, 10, 7), 4) + [date(2026, 10, 15), date(2026, 12, 3)]:
        gone.append(days(be, d)[0])
    spans.append(days(be, date(2026, 12, 2)))
    for d in weekly(date(2026, 10, 5), 10):
        if d < date(2026, 10, 19):
            spans.append((local(be, d.year, d.month, d.day, 10), local(be, d.year, d.month, d.day, 11)))
        elif d < date(2026, 11, 30) and d != date(2026, 11, 9):
            spans.append((local(be, d.year, d.month, d.day, 12), local(be, d.year, d.month, d.day, 13, 30)))
            gone.append(local(be, d.year, d.month, d.day, 10))
        else:
            gone += [local(be, d.year, d.month, d.day, 10), local(be, d.year, d.month, d.day, 12)]
    spans.append((local(be, 2026, 11, 10, 8), local(be, 2026, 11, 10, 9)))
    return spans, gone


def outlook():
    """outlook.ics, in a calendar of zone W. Europe Standard Time
    (Europe/Berlin). Its custom zones are those of New York and Sydney."""
    be, ny, syd = "Europe/Berlin", "America/New_York", "Australia/Sydney"
    spans, gone = [], []
    until = datetime(2026, 11, 27, 15, tzinfo=UTC)
    for d in series(be, date(2026, 10, 2), 16, until):
        s = local(be, d.year, d.month, d.day, 16)
        if d in (date(2026, 10, 16), date(2026, 11, 6), date(2026, 10, 23)):
            gone.append(s)
        else:
            spans.append((s, s + timedelta(hours=1)))
    spans.append((local(be, 2026, 10, 23, 18), local(be, 2026, 10, 23, 19, 30)))
    for k in range(10):
        d = date(2026, 10, 28) + timedelta(days=k)
        s = local(ny, d.year, d.month, d.day, 8)
        if d == date(2026, 10, 30):
            gone.append(s)
        else:
            spans.append((s, s + timedelta(minutes=30)))
    for d in weekly(date(2026, 9, 21), 4):
        spans.append((local(syd, d.year, d.month, d.day, 9), local(syd, d.year, d.month, d.day, 11)))
    spans.append(days(be, date(2026, 12, 24), 3))
    return spans, gone


def google_holidays():
    """google-holidays.ics, in a calendar of zone Europe/Berlin."""
    be = "Europe/Berlin"
    ds = [date(2026, 12, 25), date(2026, 12, 26), date(2026, 12, 31), date(2027, 1, 1),
          date(2027, 3, 26), date(2027, 3, 29)]
    return [days(be, d) for d in ds], [days(be, date(2026, 12, 24))[0], days(be, date(2027, 3, 28))[0]]


def google_oncall():
    """google-oncall.ics, in a calendar of zone UTC."""
    be = "Europe/Berlin"
    spans, gone = [], []
    until = datetime(2026, 12, 4, 22, 59, 59, tzinfo=UTC)
    for d in series(be, date(2026, 10, 13), 22, until, step=1):
        if d.weekday() not in (1, 3):  # Tuesday, Thursday
            continue
        s = local(be, d.year, d.month, d.day, 22)
        n = d + timedelta(days=1)
        if d in (date(2026, 10, 29), date(2026, 11, 5), date(2026, 10, 22), date(2026, 11, 17)):
            gone.append(s)
        else:
            spans.append((s, local(be, n.year, n.month, n.day, 2)))
    spans.append((local(be, 2026, 10, 22, 23), local(be, 2026, 10, 23, 3)))
    return spans, gone


def apple():
    """apple.ics, in a calendar of zone Europe/Berlin."""
    be = "Europe/Berlin"
    spans, gone = [], []
    until = datetime(2026, 11, 29, 22, 59, 59, tzinfo=UTC)
    for d in series(be, date(2026, 10, 19), 2, until):
        s = local(be, d.year, d.month, d.day, 2)
        if d == date(2026, 11, 2):
            gone.append(s)
        elif d == date(2026, 11, 9):  # SEQUENCE:2 of two changes
            spans.append((s, local(be, 2026, 11, 9, 9)))
            gone.append(local(be, 2026, 11, 9, 12))
        else:
            spans.append((s, local(be, d.year, d.month, d.day, 6)))
    for y in (2026, 2027, 2028):
        spans.append(days(be, date(y, 10, 3)))
    gone.append(days(be, date(2029, 10, 3))[0])
    sp = "America/Sao_Paulo"
    spans.append((local(sp, 2026, 11, 10, 10), local(sp, 2026, 11, 10, 12)))
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
write("outlook", *outlook())
write("google-holidays", *google_holidays())
write("google-oncall", *google_oncall())
write("apple", *apple())
