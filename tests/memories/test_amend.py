"""A short correction read against the statement it corrects (issue 24, points 2 and 4): "sorry,
45" after "we ordered 40 laptops" means "we ordered 45 laptops". The pure reading first (each shape
of value, the wrong value named or not, chatter and whole statements left alone), then through the
memory: the fact corrected, and the answer's span taken from the sentence as meant."""

from datetime import UTC, datetime

import pytest

from memories.extraction.offline.amend import amended, correction_read, holds_shape
from memories.models import Fact, FactStatus
from retrieval.answer import answer
from retrieval.spans import date_span
from tests.retrieval.test_answer_span import say  # noqa: F401  (a fixture: statements said in the team Orbit's scope)


@pytest.mark.parametrize("previous, correction, meant", [
    # a number for a number, an amount for an amount
    ("we ordered 40 new laptops for the Leeds office", "sorry, 45. five are spares", "we ordered 45 new laptops for the Leeds office"),
    ("The design budget for next year is €60k", "correction: €75k, marketing chipped in", "The design budget for next year is €75k"),
    # a weekday, a date, a time, a month in a phrase
    ("the demo moves to Tuesday mornings", "oops, Friday. Tuesdays are planning", "the demo moves to Friday mornings"),
    ("Lena's first day is 4 June", "actually it's 11 June, her notice got longer", "Lena's first day is 11 June"),
    ("we meet at 10:30 from now on", "I meant 11:15, not 10:30", "we meet at 11:15 from now on"),
    ("the data migration is due end of April", "typo: end of May. not April", "the data migration is due end of May"),
    ("the workshop is 3–4 October in the Graz office", "typo above: it's 10–11 October, not 3–4", "the workshop is 10–11 October in the Graz office"),
    # a model code; a name named as the wrong one, or mentioned in the rest
    ("the new routers are Cisco C9300s", "my bad, C9500. the 9300 was last year's plan", "the new routers are Cisco C9500"),
    ("the retreat is in Gdansk this year", "Correction: Sopot, not Gdansk.", "the retreat is in Sopot this year"),
    ("French copy for Lyon goes through Phrase", "scratch that, Smartling. the Phrase contract ran out", "French copy for Lyon goes through Smartling"),
    ("We will host the wiki on Notion", "correction on the above: we're going with Outline, not Notion. self-hosted", "We will host the wiki on Outline"),
    # a lowercase name, the old one said as where it was
    ("the billing code lives in the payments repo", "actually it's in core-api, we moved it out of payments last year", "the billing code lives in the core-api repo"),
])
def test_a_short_correction_puts_its_value_in_place_of_the_one_it_replaces(previous, correction, meant):
    assert amended(previous, correction) == meant
    assert holds_shape(previous, correction)


@pytest.mark.parametrize("previous, correction", [
    ("we moved to Leeds last year", "sorry for the late reply, busy week"),  # an apology, no value
    ("standup is at 9:30", "actually I love that idea"),  # "actually" is chat, not a correction
    ("release captain for Q4 is Ana", "correction: Joe is release captain for Q4, Ana is away"),  # a whole statement: read on its own
    ("Maya and Ana met Olek in Oslo", "sorry, Bergen"),  # several names, none named again: no guessing
    ("we shipped it", "sorry, 45"),  # nothing of the shape to replace
    ("our new vendor is WordBridge, based in Dublin", "my bad, WordBridge is in Cork, not Dublin"),  # a whole statement
])
def test_anything_else_is_not_amended(previous, correction):
    assert amended(previous, correction) is None


@pytest.mark.parametrize("correction", ["Sorry to hear that, John. Is there anything on your mind?", "Sorry about your job Jon, but go for it!",
                                        "Sorry, John."])
def test_an_apology_to_someone_is_no_correction_of_what_they_said(correction):
    # Condolences and greetings open with "sorry" too (LOCOMO's conversations hold several).
    assert amended("I went hiking with Maria last weekend", correction, same_speaker=False) is None


def test_the_wrong_value_and_the_rest_are_read():
    read = correction_read("typo above: every 2nd Thursday, not Tuesday")
    assert (read.value, read.wrong) == ("every 2nd Thursday", "Tuesday")
    assert correction_read("we moved the repo to GitLab") is None
    assert not holds_shape("5 mins", "sorry, Wednesday")  # chatter in between is passed over


@pytest.mark.parametrize("sentence, said, expected", [
    ("Lena's first day is 11 June", "2025-05-20", "11 June 2025"),  # ahead: this year
    ("the kickoff is on 8 January", "2025-12-10", "8 January 2026"),  # ahead, over the new year
    ("we dropped the old API on 30 December", "2026-01-04", "30 December 2025"),  # the past: the last one
    ("the workshop is 10–11 October", "2025-09-01", "10–11 October 2025"),
    ("it launched on 3 March 2024", "2025-09-01", "3 March 2024"),  # a year said stays as said
])
def test_a_day_said_without_its_year_is_answered_with_it(sentence, said, expected):
    assert date_span(sentence, datetime.fromisoformat(said).replace(tzinfo=UTC)) == expected


@pytest.mark.django_db
def test_through_the_memory_the_fact_said_first_is_corrected(say):
    say("maya", "The team offsite is in Lisbon.", "2026-05-01")
    say("ana", "5 mins", "2026-05-01")  # chatter in between
    say("maya", "scratch that, Porto. the Lisbon venue is booked", "2026-05-01")
    rows = {f.value: f for f in Fact.objects.in_scope(say.cast.scope_a).filter(attribute="offsite_place")}
    assert rows["Porto"].status == FactStatus.ACTIVE
    assert rows["Lisbon"].status == FactStatus.SUPERSEDED and rows["Porto"].supersedes_id == rows["Lisbon"].pk


@pytest.mark.django_db
def test_an_answer_from_the_evidence_takes_the_corrected_value_and_quotes_the_correction(say):
    say("tomasz", "we ordered 40 new laptops for the Leeds office", "2026-03-02")
    say("tomasz", "sorry, 45. five are spares", "2026-03-02")
    reply = answer(scope=say.cast.scope_a, question="How many laptops did we order for the Leeds office?",
                   now=datetime(2026, 12, 1, tzinfo=UTC)).text.split("\n")
    assert reply[0] == "45 new"
    # the corrected-away value is not offered beside the current one (the eighth pass)
    assert reply[1].startswith('tomasz said on 2 March 2026: "we ordered … new laptops') and "40" not in reply[1]
    assert 'corrected on 2 March 2026: "sorry, 45. five are spares"' in reply[1]


@pytest.mark.django_db
def test_a_correction_of_a_later_statement_does_not_change_an_earlier_one(say):
    say("tomasz", "we ordered 40 new laptops for the Leeds office", "2026-03-02")
    say("tomasz", "we bought 12 monitors for Leeds too", "2026-03-03")
    say("tomasz", "sorry, 14", "2026-03-03")  # about the monitors
    reply = answer(scope=say.cast.scope_a, question="How many laptops did we order for the Leeds office?",
                   now=datetime(2026, 12, 1, tzinfo=UTC)).text.split("\n")
    assert reply[0] == "40 new" and "corrected" not in reply[1]


# Tenth pass: a correction that says the whole value again, around the wrong part it names.
@pytest.mark.parametrize("previous, correction, meant", [
    # a weekday and a date are one date: "not Monday" replaces the whole "Monday 3 March", never "Wednesday 5 March 3 March"
    ("the board review is on Monday 3 March in Leeds", "sorry, meant Wednesday 5 March, not Monday",
     "the board review is on Wednesday 5 March in Leeds"),
    ("Our kick-off was Thursday 9 October.", "oops, I meant Friday 10 October. not Thursday", "Our kick-off was Friday 10 October."),
    # the wrong day said as an ordinal: "not the 12th" for "12 May"; the new date said with its weekday
    ("Team dinner: Tuesday 12 May at the Ivy.", "Correction on the dinner date: it's Thursday 14 May, not the 12th.",
     "Team dinner: Thursday 14 May at the Ivy."),
    ("we'll hold the audit on 21 November", "typo: it's 28 November, not the 21st", "we'll hold the audit on 28 November"),
    # a name said again whole: "Dr Ruth Kemp, not Kent" replaces "Dr Ruth Kent", not "Kent" alone
    ("The new auditor is Dr Ruth Kent.", "Correction: it's Dr Ruth Kemp, not Kent.", "The new auditor is Dr Ruth Kemp."),
    ("my cover while I'm away will be Sam Ortega", "correction: Sam Ortiz. Not Ortega.", "my cover while I'm away will be Sam Ortiz"),
    # a name whose other words the new one does not repeat keeps them
    ("we track the rota in Google Sheets", "correction: Docs, not Sheets", "we track the rota in Google Docs"),
])
def test_a_correction_that_says_the_whole_value_replaces_the_whole_value(previous, correction, meant):
    assert amended(previous, correction) == meant


@pytest.mark.parametrize("sentence, said, expected", [
    ("Team dinner: Thursday 14 May at the Ivy.", "2026-05-04", "14 May 2026"),  # not the coming Thursday (7 May)
    ("the audit was on Monday, 2 March", "2026-03-20", "2 March 2026"),
    ("we meet on Friday", "2026-05-04", "8 May 2026"),  # a weekday alone is still the coming one
])
def test_a_weekday_said_before_a_date_is_that_dates_weekday(sentence, said, expected):
    assert date_span(sentence, datetime.fromisoformat(said).replace(tzinfo=UTC)) == expected


@pytest.mark.django_db
@pytest.mark.parametrize("said, correction, question, right, wrong", [
    ("Cover for Maya's leave next week is Dr Tom Reeve.", "Correction: Dr Tom Reed. Not Reeve.",
     "Who covered Maya's leave in June 2025?", "Dr Tom Reed", "Reeve"),
    ("Our new caterer for the conference will be Hartley Foods.", "correction: it's Hartwell Foods, not Hartley",
     "Which caterer did we use for the 2025 conference?", "Hartwell Foods", "Hartley"),
    ("The external examiner this year is Prof Alan Reeve.", "Correction: Prof Alan Reed. Not Reeve.",  # the fact, read as meant
     "Who was the external examiner in June 2025?", "Prof Alan Reed", "Reeve"),
])
def test_asked_as_of_a_time_the_answer_does_not_offer_what_a_correction_replaced(say, said, correction, question, right, wrong):
    say("ines", said, "2025-06-02")
    say("ines", correction, "2025-06-02")
    reply = answer(scope=say.cast.scope_a, question=question, now=datetime(2026, 12, 1, tzinfo=UTC)).text
    assert right in reply and wrong not in reply and f"{right.split()[0]} {right.split()[0]}" not in reply


# Tenth pass: corrections in chat idiom ("it's actually X", "no wait — X", "X again this year", "the 24th").
@pytest.mark.parametrize("previous, correction, meant", [
    ("the spare desks are going to the Camden office", "it's actually Islington, not Camden — Camden has no lift",
     "the spare desks are going to the Islington office"),
    ("We'll order the lanyards from Printly", "it's actually Badgeworks, Printly couldn't do the colours",
     "We'll order the lanyards from Badgeworks"),
    ("the leaving drinks are at the Crown on Friday", "no wait — Fox Inn, the Crown's closed Mondays",
     "the leaving drinks are at the Fox Inn on Friday"),
    ("our stand this year is at the Harrogate Convention Centre", "no wait, it's ExCeL again this year, Harrogate is full",
     "our stand this year is at the ExCeL"),
    # an ordinal day for the day of the statement's one date
    ("The boiler service is 9 May", "no wait, it's the 16th. the 9th was the quote visit", "The boiler service is 16 May"),
    ("the quiz night is on 3 June at 7pm", "sorry, the 5th", "the quiz night is on 5 June at 7pm"),
    # a hyphenated name the correction mentions: the whole product it is part of
    ("we're swapping the desk phones for Poly-Com Edge units", "correction, it's Yealink — Poly-Com was the quote we passed on",
     "we're swapping the desk phones for Yealink units"),
])
def test_a_correction_in_chat_idiom_is_read(previous, correction, meant):
    assert amended(previous, correction) == meant


# Stop 38: a reply corrects with no word of correction when it calls the statement's speaker by name, or answers a
# question that checked a value ("… is $150 right?") with another one; an interjection may open a correction.
# Each with whether it still corrects with no one named: when it sets the old value apart in a clause of its own ("4B is
# the print room", "DPD lost two boxes", "Lund was the temp", "Nandos was full": `contrast.contrasted`, stop 52); else
# it is a remark.
@pytest.mark.parametrize("by, previous, correction, meant, apart", [
    # the speaker named before, inside or after the value; "it's", "it moved to", "we're at", "her name's"
    ("ravi", "the quarterly review is in room 4B on Thursday", "Ravi it's 4C, 4B is the print room", "the quarterly review is in room 4C on Thursday", True),
    ("ola", "Our courier for the samples is DPD", "It's Evri now Ola, DPD lost two boxes", "Our courier for the samples is Evri", True),
    ("ola", "The awards dinner will be at the Grand Hotel", "Ola it moved to the Marriott, the Grand double-booked",
     "The awards dinner will be at the Marriott", False),
    ("jen", "Summer party's at Ashby Hall, Aug 9. I told them 40 people", "Jen it's 46 with plus-ones, I counted",
     "Summer party's at Ashby Hall, Aug 9. I told them 46 people", False),
    ("kofi", "The new fire marshal is Bea Lund, she starts Monday", "Bea Lind! Her name's Bea Lind, Kofi, Lund was the temp",
     "The new fire marshal is Bea Lind, she starts Monday", True),
    ("meg", "dinner with the Acme folks was at Nandos on Friday", "@meg we were at the Ivy, Nandos was full",
     "dinner with the Acme folks was at Ivy on Friday", True),
])
def test_a_reply_naming_the_speaker_corrects_their_statement(by, previous, correction, meant, apart):
    assert amended(previous, correction, same_speaker=False, previous_speaker=by) == meant
    assert holds_shape(previous, correction, previous_speaker=by)
    assert amended(previous, correction, same_speaker=False, previous_speaker="someone") == (meant if apart else None)


@pytest.mark.parametrize("previous, correction, meant", [
    ("the hire deposit for the van is £150 right?", "£200, it went up in April", "the hire deposit for the van is £200"),
    ("is the parking permit €35 now? that's what the sign says", "€40, the sign's old", "the parking permit is €40"),
    ("payroll cutoff is Tuesday, correct?", "Wednesday! it moved last month", "payroll cutoff is Wednesday"),
    ("quick q: our broadband provider is Virgin, right? they want an account number", "It's Zen, we switched last year",
     "quick q: our broadband provider is Zen"),
    ("the customer says the warranty is 12 months?", "It's 24 months. the 12 was the old policy", "the customer says the warranty is 24 months"),
])
def test_a_checking_question_answered_with_another_value_is_the_statement_it_checked(previous, correction, meant):
    assert amended(previous, correction, same_speaker=False, previous_speaker="pat") == meant


@pytest.mark.parametrize("previous, correction, meant", [
    ("Cleaning rate goes up to $45/hr in March", "ugh typo, $54/hr. sorry", "Cleaning rate goes up to $54/hr in March"),
    ("the door code is 4471 from Monday", "oh correction, the code is 4417", "the door code is 4417 from Monday"),
    
])
def test_an_interjection_may_open_a_correction_and_the_value_is_found_in_a_longer_clause(previous, correction, meant):
    assert amended(previous, correction) == meant


@pytest.mark.parametrize("previous, correction", [
    ("where is the offsite this year?", "Porto, I think"),  # a wh-question checks no value
    ("did you book the 9:30 train?", "yes, the 9:30"),  # the same value: nothing corrected
    ("The awards dinner will be at the Grand Hotel", "Ola's idea was the Marriott"),  # a possessive is no call by name
    ("the team lunch is at Nandos on Friday", "the new intern starts Monday"),  # no name, no question, no opening
])
def test_a_reply_that_neither_names_nor_answers_a_check_corrects_nothing(previous, correction):
    assert amended(previous, correction, same_speaker=False, previous_speaker="ola") is None


@pytest.mark.django_db
def test_through_the_memory_a_reply_by_name_supersedes_the_fact_and_answers(say):
    say("ola", "Our courier for the samples is DPD", "2026-03-02")
    say("ravi", "It's Evri now Ola, DPD lost two boxes", "2026-03-02")
    rows = {f.value: f for f in Fact.objects.in_scope(say.cast.scope_a).exclude(status=FactStatus.RETRACTED)
            if f.value in ("DPD", "Evri")}
    assert rows["Evri"].status == FactStatus.ACTIVE and rows["DPD"].status != FactStatus.ACTIVE
    reply = answer(scope=say.cast.scope_a, question="Which courier do we use for samples?", now=datetime(2026, 12, 1, tzinfo=UTC)).text
    assert "Evri" in reply.split("\n")[0] and "DPD" not in reply.split("\n")[0]


@pytest.mark.django_db
def test_through_the_memory_a_checking_question_answered_gives_the_value(say):
    say("pat", "the hire deposit for the van is £150 right?", "2026-03-02")
    say("kim", "£200 Pat, it went up in April", "2026-03-02")
    reply = answer(scope=say.cast.scope_a, question="How much is the hire deposit for the van?", now=datetime(2026, 12, 1, tzinfo=UTC)).text
    assert "200" in reply.split("\n")[0] and "150" not in reply.split("\n")[0]


@pytest.mark.parametrize("previous, correction", [
    # a bare word is no value: interjections, thanks, a greeting ("Hey Tim!") are capitalised too
    ("I went to Paris with Caroline last week", "Wow Caroline, sounds amazing!"),
    ("we adopted a puppy called Biscuit", "Aww Mel, Biscuit is so cute"),
    ("Did you get to Paris in the end?", "Wow, no, the trip fell through"),
    ("Do you have any favorite fantasy movies as well?", "Definitely Star Wars! It's my favorite"),
    ("Have you ever been part of a sports team?", "Nope, never been on a sports team. I'm more into reading"),
    # a name said as one, but nothing in the statement it could replace (a capital opening a sentence is no name)
    ("Thanks for your support, Mel. How's your family doing? What's their name?", "Thanks, Caroline! his name is Kyle!"),
    # "not much has changed", "I'm off to bake": no wrong value named
    ("Did you save the prize money for something special?", "Thanks Mel! Not much has changed for me, I'm off to bake"),
])
def test_a_reply_by_name_that_only_reacts_corrects_nothing(previous, correction):
    # LOCOMO's conversations (two friends calling each other by name): none of their 2,632 consecutive pairs in the
    # five conversations is read as a correction.
    assert amended(previous, correction, same_speaker=False, previous_speaker="caroline") is None
    assert amended(previous, correction, same_speaker=False, previous_speaker="mel") is None


def test_what_may_be_a_reply_is_told_before_any_lookup():
    # The extractor looks up the statements before a message only when it opens as a correction or `may_reply`.
    from memories.extraction.offline.amend import may_reply

    names = ["dana", "nico"]
    assert may_reply("Dana it's $2,800, the $2,400 was their first number", names)  # called by name
    assert may_reply("$200, it went up last year", names) and may_reply("Tuesday! we're open Monday", names)  # a value first
    assert may_reply("it's Vivint, we switched in the fall", names)  # a value said as one
    assert not may_reply("Wow, that sounds amazing!", names) and not may_reply("I love hiking too", names)
    assert not may_reply("Dana's idea was good", names)  # a possessive calls nobody


# Stop 43: shapes of short corrections read off the development sets' misses, in sentences of our own.
@pytest.mark.parametrize("previous, correction, meant", [
    # a share, how often
    ("the bonus pool is 8% of profit this year", "typo!! 6%. sorry all", "the bonus pool is 6% of profit this year"),
    ("the Pinecrest IPA is 5.2%, on tap from friday", "sorry I meant 5.6%, 5.2 was the pilot", "the Pinecrest IPA is 5.6%, on tap from friday"),
    ("backups are restore-tested every 3 months", "sorry, every 2 months. 3 was the old plan", "backups are restore-tested every 2 months"),
    ("the ops report goes out weekly to the board", "sorry, fortnightly. weekly was too much", "the ops report goes out fortnightly to the board"),
    # an apology with no comma after it, or a dash
    ("Headcount for the summer party: 38", "oops 41 not 38, forgot the interns", "Headcount for the summer party: 41"),
    ("Onboarding is in room 4 on level 2 from May", "Sorry it's room 6 not 4, room 4 has no projector", "Onboarding is in room 6 on level 2 from May"),
    ("The fire drill is on 3 March", "my bad — 10 March. the warden is away", "The fire drill is on 10 March"),
    # a phrase holding two shapes, one of them the same as said: the other is the correction
    ("Bin collection is Monday morning 7am from now on", "ignore me earlier, bins are Tuesday morning 7am", "Bin collection is Tuesday morning 7am from now on"),
    # "actually" and the corrected phrase; a date for the month said
    ("Jonas is team lead from March!", "actually from April 1 — HR paperwork", "Jonas is team lead from April!"),
    # of two names, the one the new value repeats a word of
    ("Pia Novak left for the Oslo team, our new designer is Marta Kovac", "typo: Marta Kovacs", "Pia Novak left for the Oslo team, our new designer is Marta Kovacs"),
    # "the X Y Z is …"
    ("Grant reports are due 4 May", "ignore that — the grant report deadline is 11 May. 4 May was the draft", "Grant reports are due 11 May"),
    # a name that opens with a small word is the name ("Tony", "Frome")
    ("the induction is run by Tom", "sorry, Tony", "the induction is run by Tony"),
    ("we're moving out of Clifton to Bath in June", "scratch that, Frome. Bath is too dear", "we're moving out of Clifton to Frome in June"),
])
def test_a_short_correction_in_other_shapes_is_read(previous, correction, meant):
    assert holds_shape(previous, correction)
    assert amended(previous, correction) == meant


def test_a_correction_naming_its_wrong_value_is_about_the_statement_that_said_it():
    correction = "sorry, I meant Vault, not Doppler. Doppler was the trial"
    assert not holds_shape("CI moved from Jenkins to Buildkite last week", correction)  # names, but not Doppler
    assert holds_shape("we keep the deploy secrets in Doppler", correction)
    assert amended("we keep the deploy secrets in Doppler", correction) == "we keep the deploy secrets in Vault"
    # a wrong date the statement does not hold: some other statement's date
    assert not holds_shape("the audit kicks off on 2 June", "correction to the roadmap: beta is 12 May, not 5 May")
    # a wrong value of another shape than the new one still lets the new one correct ("the 11th, thursday not wednesday")
    assert amended("team away day is 10 July in Hebden", "sorry, I meant the 11th, thursday not wednesday") == "team away day is 11 July in Hebden"


@pytest.mark.parametrize("previous, correction", [
    ("standup is at 9:30 with 5 people", "sorry 2 mins late"),  # an apology before a number is no correction without "not"
    ("the retro is on Thursday", "sorry it's been a long week"),
    ("kofi is head brewer from january!", "actually from what I heard he's happy"),
])
def test_chat_that_only_looks_like_these_shapes_corrects_nothing(previous, correction):
    assert amended(previous, correction) is None


@pytest.mark.parametrize("previous, correction, meant", [
    ("off to the first-aid course in Perth next week", "Small correction: the first-aid course is in Stirling, not Perth.",
     "off to the first-aid course in Stirling next week"),
    ("The new depot will have 6 bays.", "Correction: 9 bays at the new depot, not 6. The council approved the extension",
     "The new depot will have 9 bays."),
    ("the standup is at 9:30", "Correction: standup is at 10:00, not 9:30", "the standup is at 10:00"),
])
def test_a_correction_said_as_a_whole_statement_restates_the_earlier_sentence(previous, correction, meant):
    from memories.extraction.offline.amend import restated

    assert restated(previous, correction) == meant


@pytest.mark.parametrize("previous, correction", [
    ("we went to Leeds", "I am not sure about that"),  # no correction
    ("the course is in Perth", "Correction: the audit is in May, not June"),  # its wrong value is not in the sentence
])
def test_a_whole_statement_that_names_no_wrong_value_of_the_sentence_restates_nothing(previous, correction):
    from memories.extraction.offline.amend import restated

    assert restated(previous, correction) is None


@pytest.mark.django_db
def test_an_answer_quotes_an_earlier_sentence_as_a_whole_statement_corrected_it(say):
    say("kirsty", "tomasz and i are off to the first-aid course in Perth next week 🩹", "2025-09-29")
    say("shona", "Small correction: the first-aid course is in Stirling, not Perth.", "2025-10-01")
    reply = answer(scope=say.cast.scope_a, question="Where was the first-aid course Kirsty and Tomasz went on?",
                   now=datetime(2026, 12, 1, tzinfo=UTC)).text
    assert "Stirling" in reply and "Perth" not in reply.split("\n")[0]


# Stop 47: chat's own marks of a correction, and a message that corrects itself.
@pytest.mark.parametrize("previous, correction, meant", [
    # the star: "*12"
    ("the new printer does 18 pages a minute", "*28", "the new printer does 28 pages a minute"),
    ("book club moves to Tuesdays", "*Thursdays", "book club moves to Thursdays"),
    # a value, then the wrong one the statement said, with no word of correction
    ("the boiler service is on 3 May, the engineer has a key", "3 JUNE not may. may was the quote", "the boiler service is on 3 JUNE, the engineer has a key"),
    ("spare chairs are in store room 14, bottom shelf", "room 41 not 14", "spare chairs are in store room 41, bottom shelf"),
    ("the hall deposit is £250", "Thanks! Quick fix for the minutes: it's £205, not £250.", "the hall deposit is £205"),
    # "apologies" opens one as "sorry" does
    ("the rent goes up to £900 in April", "apologies, £990. the letter was blurry", "the rent goes up to £990 in April"),
    # a common word capitalised as the sentence's first is no name to replace
    ("Office wifi is StaffNet now", "sorry, TeamNet!", "Office wifi is TeamNet now"),
    ("Night manager from March is Oliver", "sorry, Olivia", "Night manager from March is Olivia"),
    # of two codes the correction mentions, the one the new value repeats a word of
    ("We ordered the scanner for the lab: the XR-200.", "sorry, I meant the XR-300. The 200 has no USB-C", "We ordered the scanner for the lab: the XR-300."),
])
def test_a_star_a_named_wrong_value_and_an_apology_correct(previous, correction, meant):
    assert amended(previous, correction) == meant


@pytest.mark.parametrize("previous, correction", [
    ("the fridge in the kitchen is working again", "the freezer is not working though"),  # a clause of its own, not a value
    ("the Bristol office opens at 9", "Slack, not email, for anything urgent"),  # the wrong value was never said
    ("Slack is where Tom posts the rota", "sorry, Teams"),  # "Slack" opens the sentence as a name: two names, no guessing
])
def test_what_only_looks_like_those_marks_corrects_nothing(previous, correction):
    assert amended(previous, correction) is None


def test_a_message_that_corrects_itself_is_read_as_meant():
    from memories.extraction.offline import extract

    said = extract(text="Visitor wifi is GuestHub. Sorry, VisitorHub! Code's on the whiteboard", speaker="maya",
                   occurred_at=datetime(2026, 3, 2, tzinfo=UTC), team="Orbit")
    assert [f.value for f in said.facts if f.attribute == "visitor_wifi"] == ["VisitorHub"]


@pytest.mark.django_db
def test_an_answer_from_the_evidence_reads_a_correction_later_in_the_same_message(say):
    say("tomasz", "Our stall at the craft fair sold 40 mugs this weekend. Correction, 46, not 40, I missed a box", "2026-03-02")
    assert not Fact.objects.in_scope(say.cast.scope_a).exists()  # no fact: the answer is the evidence's
    reply = answer(scope=say.cast.scope_a, question="How many mugs did our stall sell at the craft fair?",
                   now=datetime(2026, 12, 1, tzinfo=UTC)).text.split("\n")
    assert reply[0] == "46 mugs"
    assert "40" not in "\n".join(reply)
    assert reply[1].startswith('tomasz said on 2 March 2026: "Our stall at the craft fair sold … mugs this weekend."')
    assert 'corrected on 2 March 2026: "Correction, 46, not …, I missed a box"' in reply[1]


# Stop 48: corrections in lowercase chat, with the chatter after them.
@pytest.mark.parametrize("previous, correction, meant", [
    # interjections before the apology, and the reason after the value
    ("visitor wifi code is orchid51 for today", "haha no sorry it's orchid15. long day", "visitor wifi code is orchid15 for today"),
    # an apology then the value with its digits, then why
    ("our supplier account is 73318 on the forms", "sorry 73381, fat fingers", "our supplier account is 73381 on the forms"),
    # the value and the wrong one in two sentences
    ("side gate code is 4471", "argh 4417. not 4471. new phone", "side gate code is 4417"),
    # a weekday abbreviated before a date, and the day after the weekday corrected too
    ("fire warden training on tues 12th march, 10am", "scratch that, it's weds 13th. the trainer is off tuesday",
     "fire warden training on weds 13th march, 10am"),
    # lowercase words: the name named as the wrong one, a dictionary word the statement said, the thing with another word before it
    ("site visit at oakridge farm on friday", "sorry, elmridge farm not oakridge, my mistake", "site visit at elmridge farm on friday"),
    ("signed up for the first aid course, it's in bristol", "not bristol, bath. read it wrong", "signed up for the first aid course, it's in bath"),
    ("the float is in the green box under the till", "correction: grey box! the green one is the raffle", "the float is in the grey box under the till"),
    ("leaving do is at the tennis club, fri 4 july", "sorry jo, it's the bowls club! the tennis club is shut", "leaving do is at the bowls club, fri 4 july"),
])
def test_a_correction_in_lowercase_chat_with_its_reason_after_it(previous, correction, meant):
    assert amended(previous, correction) == meant
    assert holds_shape(previous, correction)


@pytest.mark.parametrize("previous, correction", [
    ("the float is in the green box under the till", "correction: lunch is on me"),  # no thing of the statement named
    ("the float is in the green box under the till", "sorry, wrong chat"),  # an apology and chatter
    ("the float is in the green box under the till", "sorry jo, long day"),  # an apology to someone, no value
])
def test_lowercase_chatter_after_an_opening_corrects_nothing(previous, correction):
    assert amended(previous, correction) is None


@pytest.mark.django_db
def test_a_correction_of_an_event_that_gave_no_fact_changes_no_older_fact_of_the_speaker(say):
    # "scratch that, it's friday 17th" corrects the event said just before, which gave no fact: never where the
    # speaker lives, said months before (it used to become "lives in: friday 17th").
    say("ines", "I live in Harrowgate Hill, ten minutes on the bike", "2026-02-02")
    say("ines", "team photo for everyone on thurs 14th may, 2pm", "2026-05-04")
    say("ines", "scratch that, it's friday 15th. the photographer can't do thursday", "2026-05-05")
    held = Fact.objects.in_scope(say.cast.scope_a).filter(attribute="lives_in")
    assert [(f.value, f.status) for f in held] == [("Harrowgate Hill", FactStatus.ACTIVE)]


@pytest.mark.django_db
def test_an_answer_from_a_corrected_sentence_with_no_span_is_the_value_the_correction_put_in(say):
    say("maya", "printer pin is lemon88, don't share it", "2026-03-02")
    say("maya", "lol no sorry it's lemon98. tired", "2026-03-02")
    reply = answer(scope=say.cast.scope_a, question="what's the printer pin?", now=datetime(2026, 12, 1, tzinfo=UTC)).text.split("\n")
    assert reply[0] == "lemon98"
    assert "lemon88" not in "\n".join(reply)
    assert 'corrected on 2 March 2026: "lol no sorry it\'s lemon98. tired"' in reply[1]


def test_a_date_in_chats_short_form_is_written_out():
    said = datetime(2026, 5, 5, 12, tzinfo=UTC)
    assert date_span("team photo is on fri 15th may, 2pm", said) == "15 May 2026"
    assert date_span("the audit is on the 3rd of nov", said) == "3 November 2026"


@pytest.mark.parametrize("previous, correction, meant", [
    # a name spelled out, typed in lowercase or not
    ("our contact at the bank is sarah whitlock", "it's whitlocke, with an e. sarah whitlocke", "our contact at the bank is sarah whitlocke"),
    ("the temp on reception next week is jon baxter", "actually it's John with an h, he told me himself", "the temp on reception next week is John baxter"),
    ("welcome aboard niamh brannigan, our new apprentice!", "*brannagan with an a, sorry niamh", "welcome aboard niamh brannagan, our new apprentice!"),
    # a value, then "actually"
    ("spring mailing list is up to 1,180 subscribers", "1,810 actually, I misread the export", "spring mailing list is up to 1,810 subscribers"),
    # where we are, then the wrong place
    ("our hotel's the grand by the station", "we're at the carlton, not the grand, the grand was full", "our hotel's the carlton by the station"),
])
def test_a_name_respelled_a_value_then_actually_and_where_we_are_correct(previous, correction, meant):
    assert amended(previous, correction, same_speaker=False) == meant


@pytest.mark.parametrize("previous, correction", [
    ("the park is by the river", "sorry, Mark"),  # alike in three of four letters, and no spelling said
    ("spring mailing list is up to 1,180 subscribers", "it's actually a lot of work"),  # "actually" in chat
])
def test_a_word_only_alike_or_actually_in_chat_corrects_nothing(previous, correction):
    assert amended(previous, correction, same_speaker=False) is None


@pytest.mark.django_db
def test_a_correction_naming_the_wrong_value_months_later_corrects_that_fact(say):
    say("oona", "The 2027 retreat will be in Porto, 8-9 October.", "2026-04-20")
    say("oona", "Correction to the retreat: it's Braga, not Porto, same dates, the Porto venue cancelled on us.", "2026-09-14")
    held = Fact.objects.in_scope(say.cast.scope_a).filter(attribute__endswith="_place").order_by("id")
    assert [(f.value, f.status) for f in held] == [("Porto", FactStatus.SUPERSEDED), ("Braga", FactStatus.ACTIVE)]


@pytest.mark.django_db
def test_where_someone_lives_answers_no_question_that_names_nobody(say):
    say("ines", "I live in Harrowgate Hill, ten minutes on the bike", "2026-02-02")
    say("maya", "trade fair in birmingham this week, tom and ines going", "2026-03-02")
    reply = answer(scope=say.cast.scope_a, question="which city was the trade fair in?", now=datetime(2026, 12, 1, tzinfo=UTC)).text
    assert "Harrowgate" not in reply
