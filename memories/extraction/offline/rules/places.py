"""Rules for places: moving, living, where someone is from, visits."""

import re

from memories.extraction.offline.context import Clause, Context, Predicate
from memories.extraction.offline.facts import fact_add
from memories.extraction.offline.gazetteer import known_place
from memories.extraction.offline.rules.work import trailing_work
from memories.extraction.offline.values import cut_value, place_name, proper_name
from memories.extraction.offline.words import NOT_NAMES


# A move of house under way ("I'm moving to Kendal!", "moving to port ellery next month, the flat's lease is up"),
# not wished for or weighed ("thinking of moving to Leeds", "might be moving to Bath"): where they live from when it is
# said, or from the time the clause names; a person's, or a team's only as "moving house" (the speaker's household,
# `offline._household`: "we're moving to Notion" is `progressive_done`'s).
_MOVING = re.compile(r"^(?:am|is|are)\s+(?:moving|relocating)(?P<house>\s+(?:house|home))?(?:\s+back|\s+over|\s+out)?\s+(?P<rest>(?:from|to)\s+.+)$", re.I)
_WEIGHED = re.compile(r"\b(?:hope|hoping|thinking|considering|might|maybe|probably|possibly|perhaps|plan|planning|if|whether|"
                      r"dream|someday|one day|eventually)\b", re.I)
# What tells a move of house from a move of job or team ("moving to the platform team"): a town the gazetteer holds, or
# a home named beside it ("found a flat off Stricklandgate", "the canal street flat's lease is up").
_HOME_SAID = re.compile(r"\b(?:house|home|flat|apartment|place|cottage|bungalow|lease|landlord|keys|mortgage|rent|"
                        r"new address|removal van|movers|packing|boxes)\b", re.I)


def _ends(rest: str) -> dict[str, str]:
    """The ends a move names after its verb ("from Bishopston to Stroud with Ciarán"): the value after the first "from"
    and the first "to", each cut at its phrase's end."""
    parts: dict[str, str] = {}
    for segment in re.finditer(r"(?:^|\s)(from|to)\s+", rest, re.I):
        parts.setdefault(segment[1].lower(), cut_value(rest[segment.end():]))
    return parts


def _moving_home(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    """A person's move of house said as under way (`_MOVING`)."""
    m = _MOVING.match(pred.text)
    if not m or pred.negated or (ctx.team and subject == ctx.team and not m["house"]) or _WEIGHED.search(ctx.sentence or clause.text):
        return False
    parts = _ends(m["rest"])
    to = place_name(parts.get("to", ""), clause, trim=True)
    if not to or to.split()[0].lower() in NOT_NAMES or not (known_place(to) or _HOME_SAID.search(ctx.sentence or clause.text)):
        return False
    origin = place_name(parts.get("from", ""), clause, trim=True)
    fact_add(ctx, clause, subject, "lives_in", to, obj=to, obj_kind="place", previous=origin, confidence=min(confidence, 0.8))
    return True


def rule_move(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    if _moving_home(pred, subject, clause, ctx, confidence):
        return True
    m = re.match(
        r"^(?:moved|relocated|have moved|has moved)(?P<house>\s+(?:house|home|flats?|apartments?))?(?:\s+back|\s+here|\s+over|\s+out|\s+all the way)?\s+"
        r"(?P<rest>(?:from|to|out of|away from)\s+.+)$",
        pred.text,
        re.I,
    )
    if not m or pred.negated:
        return False
    rest = m["rest"]
    # A team lives nowhere: its "we moved to Utrecht" is the speaker's household (`offline._household`), but
    # its "we moved to Notion" is a tool, told from a town by the gazetteer.
    team_moved = bool(ctx.team) and subject == ctx.team and not m["house"]  # "we moved house": a household's, whatever the towns
    if out := re.match(r"^(?:out of|away from)\s+(?P<place>.+)$", rest, re.I):
        place = proper_name(cut_value(out["place"]), clause)
        if (into := re.match(r"^(?:out of|away from)\s+.+?\s+(?:to|into)\s+(?P<to>.+)$", rest, re.I)) and place \
                and (to := place_name(cut_value(into["to"]), clause)) and not (team_moved and not known_place(to)):
            # "moved out of Redland to Keynsham": where they live now, and where they left
            fact_add(ctx, clause, subject, "lives_in", to, obj=to, obj_kind="place", previous=place, confidence=confidence)
            return True
        if place and not (team_moved and not known_place(place)):
            fact_add(ctx, clause, subject, "lives_in", place, obj=place, obj_kind="place", negated=True, confidence=confidence)
            return True
        return False
    parts = _ends(rest)
    to = place_name(parts.get("to", ""), clause)
    origin = place_name(parts.get("from", ""), clause)
    if team_moved and to and not known_place(to):
        fact_add(ctx, clause, subject, "uses", to, obj=to, obj_kind="organization", confidence=min(confidence, 0.7))
        return True
    if team_moved and origin and not known_place(origin):
        return False
    if to:
        fact_add(ctx, clause, subject, "lives_in", to, obj=to, obj_kind="place", previous=origin, confidence=confidence)
        return True
    if origin:
        fact_add(ctx, clause, subject, "lived_in", origin, obj=origin, obj_kind="place", confidence=confidence)
        return True
    return False


# What a home is called ("our place in Mytholmroyd", "bought a flat in Leith").
HOME_NOUNS = r"(?:house|home|place|flat|apartment|condo|cottage|bungalow|townhouse|cabin)"

# A home bought, leased or moved into ("closed on the house up Bridger Canyon", "bought a house in Livingston",
# "signed a lease on a little place in Churchill", "got the keys to our flat in Leith"): where its buyer lives now.
HOME = re.compile(
    r"^(?:(?:finally|just|officially)\s+)?(?:bought|have bought|has bought|closed on|signed (?:a|the) lease (?:on|for)|"
    r"moved into|got the keys (?:to|for)|are renting|rented|leased)\s+(?:a|an|the|our|my|his|her|their)\s+"
    rf"(?:(?:new|little|small|tiny|first|own|old|big)\s+)*{HOME_NOUNS}"
    r"\s+(?:(?:out|over|down|up)\s+)?(?:in|up|on|at)\s+(?P<place>.+)$",
    re.I,
)


# A trip home to a town ("flying home to Bremen for my dad's 70th", "off home to Cork for Christmas", "Home to Gisborne
# for the long weekend"): the speaker is from there.
HOME_TRIP = (r"^(?:(?:am|is|are|was|were)\s+)?(?:(?:flying|going|heading|driving|travelling|traveling|off|back|popping|nipping|"
             r"went|flew|drove|headed|got)\s+)?(?:back\s+)?home\s+to\s+(?P<place>(?-i:[A-Z]).+)$")


def rule_home(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    m = HOME.match(pred.text)
    if not m or pred.negated:
        return False
    place = place_name(cut_value(m["place"]), clause, trim=True)
    if not place or place.split()[0].lower() in NOT_NAMES:
        return False
    fact_add(ctx, clause, subject, "lives_in", place, obj=place, obj_kind="place", confidence=min(confidence, 0.8))
    return True


def rule_live(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    # "I'm working remotely from Kraków", "I work from Lyon": where someone works from is where they are based
    if (m := re.match(r"^(?:work|works|working|am working|is working|are working)\s+(?:remotely\s+|mostly\s+|full-time\s+)?from\s+(?P<place>.+)$", pred.text, re.I)) \
            and not pred.negated and (place := proper_name(cut_value(m["place"]), clause)) and place.split()[0].lower() not in {"home", "the"}:
        fact_add(ctx, clause, subject, "lives_in", place, obj=place, obj_kind="place", confidence=min(confidence, 0.8))
        return True
    # "I'm in Toronto" in a team's chat (no time said: "I'm in Lisbon this week" is a visit): where they are based
    if ctx.team and clause.valid_from is None and not pred.negated and (m := re.match(r"^(?:am|is)\s+(?:based\s+|now\s+)?in\s+(?P<place>.+)$", pred.text, re.I)):
        place = proper_name(cut_value(m["place"]), clause, allow_lowercase=False)
        if place and place.split()[0].lower() not in NOT_NAMES and not re.search(r"\b(?:office|meeting|call|room|hospital|bed)\b", place, re.I):
            fact_add(ctx, clause, subject, "lives_in", place, obj=place, obj_kind="place", confidence=min(confidence, 0.7))
            return True
    m = re.match(
        r"^(?P<verb>live|lives|living|lived|used to live|am living|is living|are living|was living|reside|resides|"
        r"residing|am based|is based|are based|based|am staying|is staying|stay|stays|am settled|settled)\s+(?:in|out of)\s+(?P<place>.+)$",
        pred.text,
        re.I,
    )
    if not m:
        return False
    place_text = cut_value(m["place"])
    place = place_name(place_text, clause, trim=True)
    if not place:
        return False
    verb = m["verb"].lower()
    past = verb in {"lived", "used to live", "was living"} and not pred.perfect
    if past:
        if pred.negated:
            return False
        fact_add(ctx, clause, subject, "lived_in", place, obj=place, obj_kind="place", confidence=confidence)
    else:
        fact_add(ctx, clause, subject, "lives_in", place, obj=place, obj_kind="place", negated=pred.negated, confidence=confidence)
    # "I live in Montreal, in Rosemont", "…, up on the Plateau": a part of the same town, not another home
    rest = m["place"][len(place_text) :]
    if part := re.match(r"^\s*,?\s*(?:(?:up|down|out)\s+)?(?:in|on|near|by)\s+(?:the\s+)?(?P<part>[A-Z][\w\-']*(?:\s+[A-Z][\w\-']*)*)", rest):
        if not past and not pred.negated:  # the neighbourhood, its own fact
            fact_add(ctx, clause, subject, "neighbourhood", part["part"], obj=part["part"], obj_kind="place", confidence=min(confidence, 0.8),
                     sentence=f"{subject} lives in {part['part']}, {place}.")
        rest = rest[part.end():]
    trailing_work(rest, subject, clause, ctx, confidence)
    return True


def rule_origin(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    t = pred.text
    if pred.negated:
        return False
    for pattern, attribute in (
        (r"^(?:am|is|are|come|comes|am originally|is originally|originally come|originally)\s+from\s+(?P<place>.+)$", "is_from"),
        (r"^(?:grew up|was raised|were raised)\s+in\s+(?P<place>.+)$", "grew_up_in"),
        (r"^(?:was|were)\s+born\s+in\s+(?P<place>.+)$", "born_in"),
        (r"^(?:graduated|have graduated)\s+from\s+(?P<place>.+)$", "graduated_from"),
        # "flying home to Bremen for my dad's 70th", "home to Gisborne for the long weekend": the town one travels home to
        # is where one is from (where one lives is where one comes back from)
        (HOME_TRIP, "is_from"),
    ):
        if m := re.match(pattern, t, re.I):
            place = proper_name(cut_value(m["place"]), clause)
            if place:
                kind = "organization" if attribute == "graduated_from" else "place"
                fact_add(ctx, clause, subject, attribute, place, obj=place, obj_kind=kind, confidence=confidence)
                return True
            return False
    if re.match(r"^(?:was|were)\s+born$", t, re.I) and clause.valid_from:
        fact_add(ctx, clause, subject, "birth_date", clause.valid_from.date().isoformat(), confidence=confidence)
        return True
    return False


def rule_visit(pred: Predicate, subject: str, clause: Clause, ctx: Context, confidence: float) -> bool:
    m = re.match(
        r"^(?:went|have gone|traveled|travelled|flew|drove|took a trip|took a vacation|went on a trip|visited|visit|was|were)\s+"
        r"(?:back\s+)?(?:to\s+|in\s+)?(?P<place>.+)$",
        pred.text,
        re.I,
    )
    if not m or pred.negated:
        return False
    verb = pred.text.split()[0].lower()
    if verb in {"was", "were"} and not re.match(r"^(?:was|were)\s+in\s+", pred.text, re.I):
        return False
    place_text = cut_value(m["place"])
    place = proper_name(place_text, clause, allow_lowercase=False)
    if not place:
        return False
    fact_add(ctx, clause, subject, "visited", place, obj=place, obj_kind="place", confidence=min(confidence, 0.8))
    return True
