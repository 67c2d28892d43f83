"""The continent of each country of the catalog (ISO 3166 alpha-2): change detection groups
one region's simultaneous path changes toward one continent into one event."""

from __future__ import annotations

CONTINENTS = {
    "Africa": ("ZA",),
    "Asia": ("AE", "BH", "HK", "ID", "IL", "IN", "JP", "KR", "MY", "QA", "SA", "SG", "TH", "TW"),
    "Europe": ("BE", "CH", "DE", "ES", "FI", "FR", "GB", "IE", "IT", "NL", "PL", "SE"),
    "North America": ("CA", "MX", "US"),
    "Oceania": ("AU", "NZ"),
    "South America": ("BR", "CL"),
}
_BY_COUNTRY = {c: name for name, countries in CONTINENTS.items() for c in countries}


def continent(country: str) -> str | None:
    """The continent of a country code, or None for one the table lacks."""
    return _BY_COUNTRY.get(country.upper())
