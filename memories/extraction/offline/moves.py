"""Where a team keeps a thing, said in chat's own shape and read from the whole statement: "lockers have moved to
the old boiler room", "moved the pilot kit over to old mill quay", "hops are kept in the cold room now", "the
defib is by the front entrance from now on". The clause rules read a team event's place ("the offsite is in
Porto") and a place said as a name; chat names a thing's place in common nouns and lowercase.

A place is read only when it says it is one: a place noun ends its first words ("the cold room", "bay 3", "unit
9", "the granary building"), or it is a known town, or a name said with capitals in a text typed with them. The
thing is one to three words of the team's, not a person, a pronoun, a time or a function a tool serves ("we
moved the repos to gitlab" is a switch, `switches`). A place still ahead ("the lab is moving to unit 9 next
month") waits for its day, as a switch does. Read in a team's scope only, for a statement no rule gave a tool,
use or place of."""

import re

from memories.extraction.offline.context import Context
from memories.extraction.offline.gazetteer import known_place
from memories.extraction.offline.predicates import TIME_OR_WISH
from memories.extraction.offline.rules.team import PEOPLE_NOUNS, known_function, singular
from memories.extraction.offline.values import job_title
from memories.extraction.offline.words import NOT_NAMES
from memories.extraction.schemas import ExtractedFact

_PLACE_NOUNS = frozenset(
    "room rooms office offices building bay unit units shed yard lot carpark park warehouse floor basement cellar loft attic mezzanine "
    "kitchen bar corner cupboard cabinet shelf shelves fridge freezer store storeroom stores container garage hall library field "
    "quay street road lane site depot hub studio gym wall door entrance foyer reception corridor desk counter stage snug lab annex "
    "barn farm house centre center arena pavilion church pub cafe café hotel lodge school club ground grounds verge gate dock "
    "workshop shop taproom brewhouse porch landing stairs stairwell hallway tent marquee trailer van cabin suite wing block "
    "courtyard garden square station airport port harbour harbor beach".split()
)
_THING = r"(?P<thing>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,2}?)"
_PLACE = r"(?P<place>[\w][\w'&.\-]*(?:\s+[\w][\w'&.\-]*){0,7})"
# "lockers have moved to the old boiler room", "the lab has been moved into unit 9", "the pilot kit's moved over to …"
_MOVED = re.compile(rf"(?:^|[.!?,;:—–]\s*|\b(?:the|our)\s+){_THING}(?:'s|\s+(?:has|have|has been|have been|was|were|is|are|got|just))?\s+"
                    rf"(?:now\s+|finally\s+|officially\s+)?moved\s+(?:over\s+|back\s+|across\s+|up\s+|down\s+|out\s+)?"
                    rf"(?:(?:from|out of)\s+(?:the\s+|our\s+)?(?P<old>[\w][\w'&.\-]*(?:\s+[\w][\w'&.\-]*){{0,3}}?)\s+)?(?:in)?to\s+(?:the\s+|our\s+)?{_PLACE}", re.I)
# "moved the pilot kit over to old mill quay", "we've moved the hops into the cold room"
_MOVED_THE = re.compile(rf"\bmoved\s+(?:the|our|all the|all our)\s+{_THING}\s+(?:over\s+|back\s+|across\s+|up\s+|down\s+|out\s+)?(?:in)?to\s+(?:the\s+|our\s+)?{_PLACE}", re.I)
# "hops are kept in the cold room now", "the defib is by the front entrance from now on", "board meetings are at the chandlery now"
_KEPT = re.compile(rf"(?:^|[.!?,;:—–]\s*|\b(?:the|our)\s+){_THING}\s+(?:is|are|'s|live|lives|go|goes|sit|sits)\s+(?:now\s+)?(?:kept|stored|held|based|hung|parked|"
                   rf"happening)?\s*(?:(?:in|at|by|on|next to|behind|under)\s+(?:the\s+|our\s+)?|(?:the|our)\s+){_PLACE}", re.I)
_NOW = re.compile(r"\b(?:now|from now on|these days|going forward|nowadays|as of today|from today)\b", re.I)
_PLACE_END = re.compile(r"\s*(?:[,.;!?:—–(]|\s-\s|\b(?:now|from now on|instead|because|cos|so|and|but|for|from|until|till|til|while|since|if|as|"
                        r"which|who|where|when|with|it's|its|it|we|i|you|they|this|next|last|today|tomorrow|these days)\b)", re.I)
# One person, whose move is a home's, not a thing's place (a group's is: "the digitisation volunteers work in the old library now").
_SOMEONE = frozenset("drummer singer guitarist bassist boss landlord landlady neighbour neighbor owner founder ceo cto cfo intern".split())
_LEADS = frozenset("fyi btw ps psst update news heads up also and so ok okay right".split())
_NOT_THINGS = frozenset("we i you they he she it this that there everything everyone everybody nobody someone all one it's that's "
                        "i'm we're we've home work house".split())


def _place(said: str) -> str | None:
    """The place a slot says, cut at its end; None when it does not say it is a place."""
    place = _PLACE_END.split(said, maxsplit=1)[0].strip(" '\"")
    words = place.split()
    if not words or len(words) > 7:
        return None
    if words[0].lower() in {"a", "an"} and len(words) > 2:
        words = words[1:]  # "to a unit in St Philips"
    lowered = [w.lower() for w in words]
    if lowered[0] in {"a", "an", "my", "his", "her", "their", "your"}:
        return None
    place = " ".join(words)
    if not (known_place(place) or any(w in _PLACE_NOUNS for w in lowered[:4])):
        return None  # "lab log has moved to Google Forms", "Limble is our CMMS": a name with no place noun is a tool's
    if re.fullmatch(r"(?:\d+|\w+day|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*)", lowered[0]) and len(words) == 1:
        return None
    return place


def _thing(said: str, ctx: Context) -> str | None:
    words = [w for w in said.lower().split() if w not in {"the", "our", "all"}]
    while words and words[0] in _LEADS:
        words = words[1:]  # "FYI the AED got moved …"
    if not words or words[0] in _NOT_THINGS or words[0] in NOT_NAMES or any(w in ctx.people for w in words) or words[-1] in PEOPLE_NOUNS | _SOMEONE \
            or job_title(words[-1], strict=True):
        return None  # "the drummer moved to Glasgow", "our manager moved to …": someone, not a thing
    if known_function(" ".join(words)):
        return None  # "the repos have moved to gitlab": a switch of tool, not a place
    return " ".join(words)


def place_read(text: str, ctx: Context) -> list[ExtractedFact]:
    """Where the statement says the team's thing is now, as a fact (none when it says no single one)."""
    if not ctx.team or re.search(r"\b(?:will|'ll|going to|gonna|might|maybe|should|could|would|thinking|planning|plan to|if)\b", text, re.I):
        return []
    found = []
    for pattern, needs_now in ((_MOVED, False), (_MOVED_THE, False), (_KEPT, True)):
        for m in pattern.finditer(text):
            if needs_now and not (_NOW.search(text[m.end("thing"):]) or re.search(r"\b(?:kept|stored|based|hung|parked)\b", m[0], re.I)):
                continue  # "the barrels are in fenwick" names where, but "…are kept in …" or "… now" says it is where they live
            thing, place = _thing(m["thing"], ctx), _place(m["place"])
            if place and not any(w.lower() in _PLACE_NOUNS for w in place.split()[:4]) and m["thing"][:1].isupper():
                continue  # "Tomasz has moved to Gdansk": a name moved to a town is someone's home
            if thing and place and (thing, place) not in [f[:2] for f in found]:
                found.append((thing, place, m.groupdict().get("old")))
    if len(found) != 1 or (re.search(r"\b(?:moving|next week|next month)\b", text, re.I) and TIME_OR_WISH.search(text)):
        return []
    thing, place, old = found[0]
    if old is None and (m := re.search(r"\binstead of\s+(?:the\s+|our\s+)?(?P<old>[\w][\w'&.\-]*(?:\s+[\w][\w'&.\-]*){0,3}?)(?=\s*(?:[,.;!?]|$))", text, re.I)):
        old = m["old"]  # "… is the taproom bar now instead of the front gate"
    old = _place(old) if old else None  # not "instead of circles around Lindley"
    words = re.sub(r"[^\w\s]", "", thing).split()
    attribute = "_".join([*words[:-1], singular(words[-1])]) + "_place"
    return [ExtractedFact(subject=ctx.we, attribute=attribute, value=place, object_entity=place, object_kind="place",
                          sentence=f"The {thing} is in {place}.", previous_value=old if old and old.lower() != place.lower() else None,
                          confidence=0.7, importance=0.6)]
