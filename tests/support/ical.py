"""iCalendar text for the calendar tests (an ICS feed the test serves, events PUT on Radicale)."""

from datetime import datetime, timedelta


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%SZ")


def calendar(*events: str) -> str:
    return "\r\n".join(["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", *events, "END:VCALENDAR", ""])


def event(uid: str, start: datetime, summary: str, *more: str) -> str:
    return "\r\n".join(["BEGIN:VEVENT", f"UID:{uid}", f"DTSTAMP:{stamp(start)}", f"DTSTART:{stamp(start)}",
                        f"DTEND:{stamp(start + timedelta(hours=1))}", f"SUMMARY:{summary}", *more, "END:VEVENT"])
