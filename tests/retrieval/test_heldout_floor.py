"""The held-out answers floors (issue 24, point 3), answered offline, each suite written blind before
the extraction and answer change it measures and never tuned on; the issue's target is 90 %, and
these assert the floors reached, so that a change that loses held-out answers fails here.
heldout-a.yaml: 143 of 174 here (the tests' hash embedder; `memoryweb eval scenarios` with the
local model gives 144 = 0.828), from 108 = 0.621 before the first pass of issue 24, 124 before
the second and 140 before the fourth (local model). heldout-c.yaml was written blind before the second pass (81 = 0.485 before it, 87 of 167
= 0.521 after, the same with the local model) and is a development set since the third pass, which
studied its failures by class: 156 of 167 here (158 with the local model). The development sets
heldout-b.yaml, heldout-c.yaml and heldout-d.yaml (tuned on) have floors that say only that what was
tuned holds: heldout-b 68 of 68 since the second pass (53 before). heldout-d.yaml (Bramble, a delivery
startup) was written blind before the third pass by an engineer who read neither the extractor nor
the answer code: 114 of 236 here before it (122 = 0.517 with the local model), 120 after (127 =
0.538): the third pass lifted its development set heldout-c from 87 to 158 of 167 and the fresh set
by 5, and heldout-a not at all (140 before and after, local model).
heldout-d is a development set since the fourth pass, which studied its failures by class and
worked general mechanisms (the kind of answer a question asks for, relative days, synonyms of team
things, reporting lines and take-overs in every tense): 146 of 236 here (153 with the local model).
heldout-e.yaml (Tamarind, a hospital's clinical systems team, 254 questions) was written blind
before the fourth pass by an engineer who read neither the code, the tests nor the other sets: 124
of 254 here before it (136 = 0.535 with the local model), 134 after (146 = 0.575).
heldout-f.yaml (Kestrel, a freight firm's warehouse systems team, 191 questions) was written blind
before the fifth pass, the same way: 81 of 191 here (89 = 0.466 with the local model). The fifth
pass lifted its development set heldout-d from 153 to 186 and lowered this set to 84 (heldout-e
146 → 145), so it was not taken (docs/ARCHITECTURE.md, "Fifth pass: measured and not taken").
heldout-f is a development set since corrections by ellipsis ("sorry, 150" after "we bought 120
CT40s"), whose forms were read off its failing corrections: 90 of 191 here (98 with the local
model), heldout-e 135 (147). heldout-g.yaml (Hearthwatch, a game's live-ops team, 190 questions,
`reject` used widely) was written blind before that change: 82 of 190 here, 84 = 0.442 with the
local model before and after it. heldout-h.yaml (Larkspur, a transit authority's ticketing team,
191 questions) was written blind after it, for the next change: 86 of 191 here and with the local
model (0.450; corrections 2 of 20). heldout-i.yaml (Gannet, an offshore wind farm's O&M crew, 220
questions, superseded values also asked "before" the change) was written blind before the next change
the same way: 98 of 220 here (106 = 0.482 with the local model).
The sixth pass (shapes chat uses: things said bare, past employers, roles announced; docs/ARCHITECTURE.md,
"Sixth pass") studied heldout-e and heldout-g, development sets since: with the local model heldout-g
96 → 113, heldout-e 150 → 156, heldout-d 154 → 155, heldout-a 144 → 145, heldout-f 100 → 99, heldout-c 158;
under the hash embedder here heldout-a 144, heldout-c 157, heldout-d 148, heldout-e 146, heldout-f 91,
heldout-g 112 (the floors below). heldout-h, run for its totals only: 86 → 98 of 191 with the local model
(its floor here stays 86: it was not run a third time under the hash embedder). heldout-i, after the
sixth pass, for its totals: 106 → 107 with the local model, 98 → 99 here.
The seventh pass (a clause read phrase by phrase, emoji as sentence ends, values bounded by their phrase, a
thing in common nouns served by the tool it lives in, the quote when nothing answers; docs/ARCHITECTURE.md,
"Seventh pass") studied heldout-i and heldout-h's failures by class with all the sets above as development
sets: with the local model heldout-a 145 → 147, heldout-c 158, heldout-d 155 → 162, heldout-e 156 → 162,
heldout-f 99 → 108, heldout-g 113 → 120, heldout-h 98 → 109, heldout-i 107 → 115; here (the floors below)
heldout-a 144, heldout-b 68, heldout-c 157, heldout-d 159, heldout-e 155, heldout-f 105, heldout-g 119,
heldout-h 108, heldout-i 110. heldout-j.yaml (the collections and exhibitions team of a made-up textile
museum, 222 questions) was written blind before the seventh pass by an engineer who read neither the code nor
the other sets, and judged it without being studied: 80 = 0.360 → 90 = 0.405 of 222 with the local model,
73 → 82 here (its floor).
The eighth pass (the scope's speakers read as names in lowercase; quotes that do not offer a value they say is gone;
docs/ARCHITECTURE.md, "Eighth pass") studied heldout-j's failures: 90 → 97 of 222 with the local model; here heldout-h
108 → 113, heldout-i 110 → 115, heldout-j 82 → 91 (the floors below), the others unchanged. heldout-k.yaml (the
production, taproom and sales crew of a made-up brewery, 232 questions) was written blind before the eighth pass the
same way and judged it without being studied: 100 = 0.431 → 106 = 0.457 of 232 with the local model, 101 here after
(its floor).
The ninth pass (switches under a label or gone live, the "I" chat leaves out, "where is X from?"; docs/ARCHITECTURE.md,
"Ninth pass") studied heldout-k's failures with all the sets above as development sets: here heldout-i 115 → 119,
heldout-j 91 → 95, heldout-k 101 → 106 (the floors below), the others unchanged. heldout-l.yaml (a theatre's
production crew, 230 questions) was written blind before the ninth pass and judged it without being studied: 100 =
0.435 → 102 = 0.443 of 230 with the local model, 95 → 97 here (its floor).
heldout-m.yaml (a made-up vets group's staff, 230 questions) was written blind the same way and judged the evidence
reader, a model fitted on all the sets above (docs/ARCHITECTURE.md, "The evidence reader: measured and not taken"):
111 = 0.483 → 112 with the local model, 106 → 102 here; not taken, so its floor was main's 106.
The tenth pass (corrections that say the whole value again or in chat idiom, a weekday before a date, "where" not
answered by when; docs/ARCHITECTURE.md, "Tenth pass") studied heldout-l's and heldout-m's failures with all the sets
above as development sets: here heldout-f 105 → 106, heldout-h 113 → 116, heldout-i 119 → 123, heldout-j 95 → 100,
heldout-k 106 → 107, heldout-l 97 → 106, heldout-m 106 → 111 (the floors below), the others unchanged.
heldout-n.yaml (a made-up food bank network's operations team, 230 questions) was written blind before the tenth pass
and judged it without being studied: 87 = 0.378 → 86 with the local model, 75 → 75 here (its floor).
heldout-o.yaml (a made-up peatland research lab, 230 questions) was written blind in stop 36 and judged its one
extraction change (a team's move to a name that is no known place is a tool, not the speaker's home): 120 = 0.522 of
230 before and after with the local model, 107 before and after here; after the judging its tools failures were read,
so it is a development set since. Then a switch under way that names both ends and no time ("we're switching from
Davis to Iso-Analytical") is read as done when said: here heldout-f 106 → 107, heldout-j 100 → 104, heldout-o 107 → 108,
and heldout-m 111 → 110 (its floor lowered for it: "where are the spare scrubs kept now?" is answered by the new
fact that the vets switched scrubs supplier to ScrubHub, a tool answering a "where" question, instead of the quote that
said the laundry room). heldout-p.yaml (a made-up architecture practice, 230 questions) was written blind in stop 36 and
judged that change for its totals only: 110 = 0.478 → 111 = 0.483 with the local model, 102 → 103 here (its floor).
Stop 37 (switches made for the team by who runs its tools or said without a subject, a thing in common nouns opening
the sentence, "all calls are on Teams now", a label's function through its message and said as possession, the old
tool said closed beside the new one; docs/ARCHITECTURE.md, "Switches said by others, things said first") studied
heldout-o's failures: here heldout-d 159 → 160, heldout-h 116 → 118, heldout-k 108 → 110, heldout-l 106 → 107,
heldout-m 110 → 112, heldout-o 108 → 115, heldout-n 75 → 75, heldout-e 155 → 155 (the floors below), and heldout-g
119 → 117 (its floor lowered for it: "EU game servers run on GKE …, NA ones in the Montréal region" now gives the
right fact eu_game_server_tool = GKE, which then answers "where do the NA game servers run?" and "what manages our
dedicated game servers?" in place of the quotes that held Montréal and Agones). heldout-q.yaml (a made-up Wellington
news desk, 230 questions) was written blind for this change, its brief asking for switches said in varied ways, and
judged it without being studied: 116 = 0.504 → 118 = 0.513 with the local model, 107 → 110 here (its floor).
heldout-p, for its totals only: 111 → 111 with the local model, 103 → 103 here.
Its second batch (a team's switch with no function said, "it's all Piano now", possession with "for", "every build is on
…", a thing moved to a name that is no town, a switch said without a subject in the progressive, a weekday a switch
starts from, and a replacement's old tool kept as history when no fact held it; docs/ARCHITECTURE.md, "Switches said
by others, things said first") studied heldout-q's failures, a development set since: here heldout-f 107 → 109, heldout-g
117 → 118, heldout-i 123 → 125, heldout-j 104 → 109, heldout-k 110 → 111, heldout-m 112 → 114, heldout-n 75 → 77,
heldout-o 115 → 117, heldout-q 110 → 113 (the floors below), the others unchanged. heldout-r.yaml (a made-up outdoor-gear
shop, 230 questions) was written blind for it and judged it without being studied: 101 = 0.439 → 102 = 0.443 with the
local model, 93 → 93 here (its floor); heldout-p, for its totals only: 103 → 103 here.
Then a fact answers only when the question qualifies the head word as its attribute does, over all the words before the
head ("where do the NA game servers run?" is not eu_game_server_tool's; "our first team retreat" is the first Bramble
offsite's): here heldout-e 155 → 156, heldout-g 118 → 119, heldout-i 125 → 126, heldout-o 117 → 118, the others
unchanged; heldout-r, judging it for its totals only (its second use as a judge): 102 → 102 with the local model, 93 → 93
here; heldout-p 103 → 103.
Stop 38 read heldout-r's failures (a development set since): a reply corrects with no word of correction when it calls
the statement's speaker by name ("Dana it's $2,800", "It's Vivint June", "$200 Nico") or answers a question that
checked a value ("the deposit is $150 right?"), an interjection may open a correction ("ugh typo, $105/hr"), and a
"whose" question is not answered by an amount (docs/ARCHITECTURE.md, "Replies that correct"): here heldout-d 160 → 161,
heldout-h 118 → 119, heldout-i 126 → 129, heldout-j 109 → 111, heldout-k 111 → 113, heldout-l 107 → 108, heldout-m
114 → 115, heldout-o 118 → 119, heldout-p 103 → 104, heldout-r 93 → 105 (the floors below), the others unchanged.
heldout-s.yaml (a made-up brewery, 230 questions) was written blind for it and judged it without being studied:
98 = 0.426 → 99 = 0.430 with the local model, 93 → 94 here (its floor), corrections 4 → 5 of 23 with both.
Then a home bought, leased or moved into is where its buyer lives ("closed on the house up Bridger Canyon", "signed a
lease on a little place in Churchill"), and the speaker's news said without "I" is read when capitalised ("Moved to Four
Corners this weekend!"): here heldout-d 161 → 162, heldout-k 113 → 114, heldout-q 113 → 116, heldout-r 105 → 109, and
heldout-m 115 → 114 (its floor lowered for it: Priya's new home in Cove Bay is now a fact, which "where was the defib
before it moved?" takes for a move, and two first-person questions about moving to Stonehaven lose their quoted turn
to it); heldout-s, for its totals only (its second use as a judge): 99 → 99 with the local model, 94 → 94 here.
Stop 39: heldout-t.yaml (a made-up vet practice group, 230 questions) was written blind and committed before its first
run: 114 = 0.496 with the local model, 106 = 0.461 here (its floor). A name of the scope's speakers opening a sentence is
someone, not a thing of the team ("Priya moved from Leeds to York" is her home, not the team's "priya" place; "Dana it's
$2,800" says nothing of a team thing "dana it"): heldout-p 104 → 105 and heldout-r 109 → 110 (the floors below), the
others unchanged; heldout-t, for its totals only: 114 → 114 with the local model, 106 → 106 here. Tried there and not
taken: one word taking a plural verb ("Phones are moving from RingCentral to Dialpad") read as things the team moved, not
someone's home (here +2 −1 on heldout-r, heldout-t 114 → 114 and 106 → 106).
Then a move "out to" a town, the new place said after leaving the old one ("moved out of Headingley at last — new place
is in Meanwood"), and a trip home to a town as where one is from ("Home to Gisborne for the long weekend"): heldout-j
111 → 112, heldout-p 105 → 107 (the floors below), heldout-q 116 → 116 (Ravi's new home is found; "where was the podcast
recorded in 2024?" takes his move to Tawa for its answer); heldout-t, totals only (its third use): 114 → 114 with the
local model, 106 → 106 here.
heldout-u.yaml (a brewery co-op, 230 questions) and heldout-v.yaml (a community radio station, 230 questions) were
written blind for stop 40 and judged its change without being studied: names in chat typed in lowercase (a word no
English vocabulary holds is a name; a switch's value in lowercase chat is a name whatever word it is): heldout-u 93 → 95
with the local model, 77 → 79 here; heldout-v 86 → 88 and 76 → 79 (their floors); heldout-s 94 → 97 (its floor);
heldout-t, totals only (its fourth use): 114 → 111 with the local model, 106 → 104 here (its floor lowered for it).
Stop 41 (switches said in chat's own shape, read from the whole statement, `offline/switches.py`; quotes that elide a
value held only as no longer true in any case; corrections without their comma): heldout-w.yaml (a climbing co-op's staff
chat, 230 questions) was written blind for it and committed before its first run: 102 → 106 with the local model, 91 → 94
here (its floor); heldout-u 95 → 100 and 79 → 86, heldout-v 88 → 88 and 79 → 82, heldout-t 111 → 114 and 104 → 105 (their
floors, totals only); the development sets here heldout-e 156 → 162, heldout-f 109 → 112, heldout-g 119 → 122, heldout-h
119 → 121, heldout-i 129 → 130, heldout-j 112 → 114, heldout-k 114 → 120, heldout-l 108 → 109, heldout-n 77 → 81,
heldout-p 107 → 109, heldout-r 110 → 115, heldout-s 97 → 105 (the floors below), the others unchanged.
Then where a team keeps a thing, said in chat's shape (`offline/moves.py`: "lockers have moved to the old boiler room",
"hops are kept in the cold room now"): heldout-w 106 → 107 with the local model, 94 → 96 here; heldout-u 100 → 103 and
86 → 90, heldout-v 88 → 88 and 82 → 82, heldout-t 114 → 115 and 105 → 106 (their floors, totals only); here heldout-i
130 → 132, heldout-j 114 → 115, heldout-m 114 → 116, heldout-o 119 → 120, heldout-s 105 → 108, and heldout-r 115 → 114
(its floor lowered for it: the bike shop's new place answers "which day of the week is the bike shop closed?", and the
Annex as the rental fleet's place "what was the Annex space before we leased it?").
Stop 42. heldout-x.yaml (a sailing school and boatyard's staff chat, 230 questions) was written blind for it and
committed before its first run; blind figures are totals only, hash here / local model. First, shapes of team chat (a thing
named with when it is, "the X is the <Name>", a thing's place and day in one clause, job titles said with a possessive or
as "head of …", pets named in the plural, corrections that take back the last message or name the wrong value first, a
message that corrects itself; a one-word attribute asked only by the thing it names): development 2,461 → 2,474, but the
five blind suites 465 → 462 here and 513 → 510 with the local model (heldout-x 91 → 89 and 100 → 98; places lost 3). Then
events of a year ("this year's hackathon" is the 2026 one; a fact of another year's day answers no question naming a
year): development 2,482, blind 463 here. Then the closest memories quoted for a question about now elide what they say
is gone or what the scope holds only as no longer true (`answer._quoted`): development 2,495, blind 471 here (heldout-t
107, -u 92, -v 83, -w 98, -x 91: their floors) and 524 with the local model before the last small step (t 118, u 107, v
89, w 110, x 100). Over the stop: blind 465 → 471 here, 513 → 524 with the local model; development 2,461 → 2,495. Floors
raised to what was measured; heldout-d lowered 162 → 161 ("I'm in Antwerp" quoted with Antwerp elided, a place the scope
holds only as left) and heldout-l 109 → 108 (a lighting desk's switch quoted less well). Last, a time said with when it
holds ("standup is at 9:30 from next week" was standup_place "9"): development 2,499, blind unchanged. heldout-o's floor is
123, what the tests' run gave; `memoryweb eval scenarios` gave 124.
Stop 43 (short corrections in more of chat's shapes; functions of any trade and their other words; a first-person
question answered only from its asker's words or words naming them; docs/ARCHITECTURE.md, "Corrections, functions and
the asker"): development 2,499 → 2,561 here; the five blind suites, totals only, 471 → 479 here (heldout-t 107 → 106, -u
92 → 95, -v 83 → 88, -w 98 → 101, -x 91 → 89) and 525 → 530 with the local model (t 119 → 115, u 107 → 107, v 89 → 93,
w 110 → 114, x 100 → 101; measured one small step before the last, which cost heldout-w one here). The floors are what was measured: heldout-t and heldout-x lowered for it, unstudied (the
functions step alone cost the blind suites 4 here).
Stop 44. heldout-y.yaml (a translation agency's staff chat, 230 questions) was written blind by a helper and committed
before it was ever run; measured before any change of the stop: 96 here (hash) and 102 with the local model. The stop's one
change to answers (a tool named as the subject of a known function) left it and the five blind suites before it as they
were (t–y 575 here); development 2,561 → 2,563 (one of the two heldout-o's flip).
Stop 45. heldout-z.yaml (a family farm's staff chat: farm shop, café, veg boxes; 230 questions) was written blind by a
helper and committed before it was ever run: 147 here before any change of the stop. The stop's change (a firm as the
subject of what it does for the team, lists of tools by function, one of the team switching all of it, a day without its
year opening a statement, a thing that goes through one of the team, one person's line after "and"): development 2,563 →
2,571 here; the seven blind suites, totals only, 722 → 725 (heldout-t 106 → 107, -u 95 → 95, -v 88 → 87, -w 101 → 103,
-x 89 → 89, -y 96 → 97, -z 147 → 147). Floors are what was measured; heldout-v lowered for it (unstudied), heldout-m and
heldout-s by one each (a new owner fact outranks the quote that answered "where is Tomasz from?" and "what password manager
did we use before 1Password?").
Then moves in more of chat's shapes ("moved out of Redland to Keynsham", "moved house from Leeds to York", a label that
says the move before two towns, "at our place in Mytholmroyd"): heldout-aa.yaml (a bike repair shop and cycling café, 230
questions) was written blind by a helper and committed before its first run, and judged it without being studied: 134 →
134 here; the seven before it 725 → 725; development 2,571 → 2,579 (heldout-i 139 → 140, -j 121 → 122, -l 111 → 116, -m
123 → 124, -s 118 → 119: the floors below), and heldout-p 119 → 118 (its floor lowered for it: "where did Kwame live before
Meanwood?" lost the quote that answered it to the new fact that he lives in Meanwood).
Stop 46 changed no extraction: heldout-ab.yaml (a family-run holiday park's staff chat, 230 questions) was written
blind by a helper and committed before its first run, which measured 103 here: its floor, read as a total only, the
"before" of the next extraction change.
Stop 47: corrections in more of chat's shapes, read off the development sets' failing corrections (a message that
corrects itself, "Guest wifi is CourierGuest. Sorry, HarbourGuest!", read so by the answers' quotes too; "*35"; "14 JULY
not june" with no word of correction; "apologies, …"): heldout-ac.yaml (a two-surgery vet practice's staff chat, 230
questions) was written blind by a helper and committed before its first run: 79 before the change and 79 after (its
floor); heldout-ab, whose questions were read (not its failures) before the change, 103 → 103; the eight blind suites
before it 860 → 861 (heldout-aa 134 → 135); development 2,579 → 2,590 (heldout-k 132 → 133, -l 116 → 117, -n 83 → 86,
-q 126 → 132: the floors below).
Then a team's switch of tool in more of chat's shapes, read off heldout-ac's failing tools (a development set since):
"the sumup contract is up, we're going to dojo", "we're leaving peninsula. croner is our HR advice service", "sharpsmart
are taking over", "provet cloud is replacing rxworks", "moving off bitwarden to 1password", a lowercase everyday word as
the new tool after an old name no dictionary holds ("from rotacloud to deputy"); and a switch announced for a day ahead
("paging is moving from PagerDuty to Rootly on 1 July", said in June) is the new tool from that day (it gave nothing
before: a plan), the store keeping a tool's day ahead. heldout-ad.yaml (a family bakery chain's staff chat, 230
questions) was written blind by a helper and committed before its first run, which judged it: 101 before, 107 after
(its floor); heldout-ac 79 → 90; the nine blind suites t–ab, totals only, 963 → 980 (the floors below); development
2,590 → 2,603, heldout-m 124 → 123 (its floor lowered: "Dog vaccines: moving from Nobivac to Versican Plus from
March" is now a fact, and it answers "what do we use to monitor the vaccine fridge temperature?" by the word vaccine).
Stop 48: corrections in lowercase chat with the chatter after them ("lol no sorry it's hedgehog24. brain not working",
"sorry 55210, I swapped the digits", "ugh 2690. not 2609.", "sorry, fernhill farm not fernleigh", "correction: blue tin!",
"sorry priya, it's the rugby club!", "421 actually", a name spelled out: "it's hollins, with an n"); a "sorry, I meant …"
that names no wrong value corrects only what its speaker said within CORRECTION_WITHIN, and a day or a number never a name
(it made kwame "live in friday 17th"); a quote corrected with no span gives the value the correction put in; a date in
chat's short form written out ("17th nov" → "17 November"); where someone lives answers no question that names nobody;
a year among words of a thing answers no "when". heldout-ae.yaml (a plumbing and heating firm's staff chat, 230 questions)
was written blind by a helper, committed in stop 47 and first run on this stop's starting code: 129 before, 132 after (its
floor); heldout-ad 107 → 109, the nine blind suites t–ab, totals only, 980 → 992 (the floors below); development 2,693 →
2,749 (heldout-ac 90 → 106), no question lost. Then three answers read off heldout-ac's and heldout-ae's failures (both
development sets by then): "what day …?" is a weekday or a date, never an ordinal alone ("9th"); a value said as wrong in
the quoted sentence ("tuesday 19th not monday") is elided for a question about the past too, unless it asks what came
before; "the Hendry job" is one job, no job-management tool's: development 2,749 → 2,752 (heldout-ac 108, heldout-o 130
by the command, 128 its floor here), heldout-ae 132 → 134; blind, totals only: t–ab 992 → 994, heldout-ad 109 → 111.
Then whose relations and pets, judged by heldout-af.yaml (a Cornish boatyard and chandlery's staff chat, 230 questions),
written blind by a helper and committed in stop 48 before its first run: a relation held as has_<relation> answers a
question naming it ("has" is no word a question must say); "which school is my daughter starting at?" asks the school;
a question naming whose relation it asks about ("Tom's wife") is answered only from what that person said or what names
them, and their own words count as naming them; the possessive's "s" is no word a question and a sentence share; a pet
named with an English word in lowercase chat ("my cat pickle knocked …"); a name shouted after an autocorrect ("BISTO.
… stupid autocorrect"). heldout-af 92 → 95 (its floor; totals only, unstudied); blind t–ab 994 → 1,008 (heldout-t
113 → 112, its floor lowered for it, unstudied), heldout-ad 111 → 113; development 2,752 → 2,797 (heldout-ac 108 → 118,
heldout-ae 134 → 140; heldout-s 122 → 120, its floor lowered: "where's felix from?" and "where's jonah from?" lost
their quotes).
Then switches said by a replacing verb and in more of chat's shapes, judged by heldout-ag.yaml (a Leeds removals and
storage firm's staff chat, 230 questions), written blind by a helper and committed in stop 49 before its first run:
"X is being replaced by Y", "we're replacing X with Y", "Y has replaced X", "moving out of X into Y", "X → Y", "goodbye
X, hello Y", "the contract with X has ended", "Y now service the …", "timesheets are in Y from today". heldout-ag 118 →
120 (its floor; totals only, unstudied); blind t–ab without heldout-x 914 → 920, heldout-ad 113, heldout-af 95 → 96;
development 2,937 → 2,966. heldout-x (94 → 96) is a development set since: its failures were read by mistake after the
first version (93), and two bugs it showed were mended ("new rib is ordered" is no tool; "moving over to" says no
function). heldout-s 120 → 118, its floor lowered: "in which room does the tasting panel meet?" and "who runs the
tasting panel now?" are answered from the new "scores go into draughtlab" fact's quote.
Stop 50: a person's pastimes and past employers in chat's shapes ("I've taken up bouldering", "I'm a massive chess nerd",
"woodworking is my therapy", "outside work I sing in a choir"; "before NTA I was at TfL", "I left Booking.com to join
Bramble", "Oskar here, ex-Vattenfall", "welcome Felix! he joins us from Hermes"), questions about free time asked as
tastes, and a taste asked of nobody answered by no one's. heldout-ah.yaml (a Norwich printing works' staff chat, 230
questions), written blind by a helper and committed before its first run: 92 → 92 (its floor; totals only, unstudied);
blind t–ab without heldout-x 920 → 920, heldout-ad 113, heldout-af 96, heldout-ag 120, all unchanged; development 3,062 →
3,080 (heldout-d 174 → 180, -h 135 → 139, -s 118 → 121: the floors below).
Stop 51: a job or an employer asked of nobody ("what make was the boiler at the Hendry job?", "how are permits to work
issued now?", "whose job is the safety boat?") is answered by no one's, as a taste already was. heldout-ai.yaml (a
Wiltshire garden centre's staff chat, 230 questions), written blind by a helper and committed before its first run:
124 → 124 (its floor; totals only, unstudied); blind t–ab without heldout-x 920 → 925 (heldout-u 100 → 101, -y 104 →
107, -z 154 → 155), heldout-ad 113 → 114, heldout-af 96, -ag 120, -ah 92 unchanged; development 3,080 → 3,091 (heldout-d
180 → 182, -i 147 → 150, -k 139 → 140, -l 130 → 131, -m 128 → 129, -x 96 → 99), nothing lost.
Stop 52: a correction that sets the new value beside the old one ("sorry sorry — CROWN. ardagh was the other quote",
"it's unit 6 on the paperwork tomas. unit 4 is the tile place", "make that 60 lengths of 22mm, tom says 40 wont touch it",
"omg sorry ignore that, my college day is THURSDAY not tuesday": `contrast.contrasted`) corrects the statement before it.
heldout-aj.yaml (a Leeds and York architecture practice's chat, 230 questions), written blind by a helper and committed
before its first run: 87 → 88 (its floor; totals only, unstudied); blind t–ab without heldout-x 925 → 935, heldout-ad
114 → 115, heldout-af 96 → 101, -ag 120, -ah 92, -ai 124 unchanged; development 3,091 → 3,110 (20 gained, 1 lost: the
floors below). heldout-ak.yaml (a Norfolk ferry and seal-trip operator's chat, 230 questions), written blind by a helper
and committed before its first run: 102 before and after the rule's last tightening (a word of correction alone needs
an old value that looks like one), the one change it judged (its floor; totals only).
Stop 53: a move of house under way ("I'm moving to Kendal! found a flat …") or said without "I" ("Finally moved to
Wainuiomata") is where the speaker lives. heldout-al.yaml (a Sussex Weald vineyard's chat, 230 questions), written blind
by a helper and committed before its first run: 120 → 120 (its floor; totals only, unstudied); blind t–ab without
heldout-x 935 → 936, heldout-ai 124 → 125, heldout-aj 88 → 86, the others unchanged; development 3,110 → 3,114 (the
floors below). heldout-am.yaml (a Sheffield bouldering centre's chat, 230 questions), written blind by a helper and
committed before its first run: 142 before and after a change it judged and that was not taken (a "who supplies …?"
question asking for a firm; its floor, totals only).
Stop 54: heldout-an.yaml (a regional airline's ground-operations chat, 230 questions), written blind by a helper and
committed before its first run: 94 before and after a change it judged and that was not taken (an object that is "all
of it" leaving the function to the verb, "we design everything in Figma" → design_tool; on the development suites it finished 2,919 → 2,918, 2 answers gained
and 3 lost; its floor, totals only).
Through recorded model replies: not done (no model is reachable here to record replies for these
suites' statements)."""

from pathlib import Path

import pytest

from retrieval.eval import run_scenarios

pytestmark = pytest.mark.django_db
SCENARIOS = Path(__file__).parents[2] / "retrieval" / "scenarios"
TARGET = 0.90  # the issue's; not reached offline


@pytest.mark.parametrize("suite, right, questions", [("heldout-a.yaml", 153, 174), ("heldout-b.yaml", 68, 68), ("heldout-c.yaml", 159, 167),
                                                        ("heldout-d.yaml", 182, 236), ("heldout-e.yaml", 174, 254),
                                                        ("heldout-f.yaml", 129, 191), ("heldout-g.yaml", 133, 190),
                                                        ("heldout-h.yaml", 138, 191), ("heldout-i.yaml", 151, 220), ("heldout-j.yaml", 133, 222),
                                                        ("heldout-k.yaml", 142, 232),
                                                        ("heldout-l.yaml", 133, 230), ("heldout-m.yaml", 129, 230),
                                                        ("heldout-n.yaml", 92, 230), ("heldout-o.yaml", 135, 230),
                                                        ("heldout-p.yaml", 130, 230), ("heldout-q.yaml", 142, 230),
                                                        ("heldout-r.yaml", 127, 230), ("heldout-s.yaml", 126, 230),
                                                        ("heldout-t.yaml", 118, 230), ("heldout-u.yaml", 103, 230),
                                                        ("heldout-v.yaml", 92, 230), ("heldout-w.yaml", 109, 230),
                                                        ("heldout-x.yaml", 103, 230), ("heldout-y.yaml", 108, 230),
                                                        ("heldout-z.yaml", 155, 230),
                                                        ("heldout-aa.yaml", 137, 230), ("heldout-ab.yaml", 114, 230),
                                                        ("heldout-ac.yaml", 119, 230), ("heldout-ad.yaml", 115, 230),
                                                        ("heldout-ae.yaml", 143, 230),
                                                        ("heldout-af.yaml", 101, 230), ("heldout-ag.yaml", 120, 230),
                                                        ("heldout-ah.yaml", 92, 230), ("heldout-ai.yaml", 125, 230),
                                                        ("heldout-aj.yaml", 86, 230), ("heldout-ak.yaml", 102, 230),
                                                        ("heldout-al.yaml", 120, 230), ("heldout-am.yaml", 142, 230),
                                                        ("heldout-an.yaml", 94, 230)])
def test_the_held_out_suites_answer_at_their_floor_offline(cast, suite, right, questions):
    report = run_scenarios(owner=cast.owner, path=SCENARIOS / suite)
    assert report["provider"] == "offline" and report["failed_extractions"] == 0 and report["questions"] == questions
    assert report["right"] >= right, [w["question"] for w in report["wrong"]]
    if suite not in {"heldout-b.yaml", "heldout-c.yaml", "heldout-d.yaml", "heldout-e.yaml", "heldout-f.yaml", "heldout-g.yaml"}:  # development sets: tuned on, they measure no target
        assert right / questions < TARGET  # when the target is reached, raise the floor to it
