"""The rules, tried in this order on each predicate; the first that fits gives the facts
(leaving before working, a team's tools and owners before moves, so "left Google" is not read as a job; visits last, as the weakest)."""

from memories.extraction.offline.rules.people import rule_age, rule_family, rule_pets
from memories.extraction.offline.rules.places import rule_home, rule_live, rule_move, rule_origin, rule_visit
from memories.extraction.offline.rules.team import rule_team
from memories.extraction.offline.rules.tastes import rule_hobby, rule_likes, rule_plays, rule_speaks
from memories.extraction.offline.rules.work import rule_leave, rule_study, rule_work

RULES = [
    rule_leave,
    rule_team,
    rule_move,
    rule_home,
    rule_live,
    rule_work,
    rule_likes,
    rule_hobby,
    rule_pets,
    rule_family,
    rule_origin,
    rule_study,
    rule_plays,
    rule_speaks,
    rule_age,
    rule_visit,
]
