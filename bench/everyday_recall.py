"""Everyday questions over one user's two years, through the public API with its defaults: what a chatbot
wired to MemoryX meets. Our own dev set (written here, in English, Chinese and Japanese); the held-out
everyday set that judges recall is kept aside and is not this one.

    HF_HUB_OFFLINE=1 python bench/everyday_recall.py [--set first|...|seventh] [--raw] [--data-dir DIR] [--show-misses]

Seven lives: the first (24 statements, 24 questions) is the one ranking changes were made on; each later one
(the second and third: 20 statements, 22 questions; the fourth to seventh: 18 statements typed as chat messages
are, 20 questions) was written after the changes made on the one before it and before its own first run, as
their clean check. Each one's misses were read after that run, so all seven are dev sets now
(docs/benchmarks.md gives each clean figure).

Each statement is one user message `Memory.add([{"role": "user", "content", "timestamp"}], user_id=...)` with
extraction on (`infer=True`, the default) and the offline model (what runs without an API key), the embedded
graph on; `--raw` adds each as it was said (`infer=False`) instead, to measure the ranking alone. Then each
question is `Memory.search(question, user_id=..., limit=3, now=...)`; a question is answered at rank k when
the k-th result's text contains every word of its expected answer (case-insensitive; "a|b": either). Prints
top-1 and top-3, per language, and the misses.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")

START = datetime(2024, 1, 8, 19, 0, tzinfo=timezone.utc)
NOW = datetime(2025, 12, 20, 12, 0, tzinfo=timezone.utc)

# (days after START, what the user said)
LIFE = [
    (0, "My name is Sam and I live in Leeds."),
    (3, "I work as a nurse at St James's Hospital."),
    (10, "My dog is called Biscuit, he's a beagle."),
    (21, "My wife Priya is a teacher."),
    (40, "I'm allergic to peanuts."),
    (65, "My daughter Maya just started school."),
    (90, "I love Thai food and Italian food."),
    (120, "My manager is called Helen."),
    (150, "I ran the Leeds half marathon today, finished in 2 hours 5 minutes."),
    (200, "I started learning the guitar."),
    (260, "I don't like horror films."),
    (300, "Big news: I moved to Manchester."),
    (330, "I quit my job at the hospital."),
    (345, "I now work as a nurse at a clinic in Salford."),
    (380, "My new manager is Omar."),
    (420, "I stopped playing the guitar, I took up the piano instead."),
    (480, "Our cat Miso arrived today, she's a rescue."),
    (520, "My favourite book is The Left Hand of Darkness."),
    (560, "I drive a blue Toyota Corolla."),
    (600, "My sister Ana lives in Lisbon."),
    (640, "我妹妹下个月结婚。"),
    (660, "我最喜欢的茶是乌龙茶。"),
    (690, "週末は山登りをしています。"),
    (700, "私の誕生日は七月十日です。"),
]

# (question, words the answering memory must contain ("a|b": either), language)
QUESTIONS = [
    ("What's my dog's name?", ["Biscuit"], "en"),
    ("What is my wife's name?", ["Priya"], "en"),
    ("What's my daughter's name?", ["Maya"], "en"),
    ("Where do I live now?", ["Manchester"], "en"),
    ("Where do I work?", ["Salford"], "en"),
    ("Who is my manager?", ["Omar"], "en"),
    ("What am I allergic to?", ["peanut"], "en"),
    ("What food do I like?", ["Thai|Italian"], "en"),
    ("What should I cook for dinner tonight?", ["Thai|Italian"], "en"),
    ("When did I run the half marathon?", ["marathon"], "en"),
    ("What instrument do I play?", ["piano"], "en"),
    ("Do I like horror movies?", ["horror"], "en"),
    ("What is my cat called?", ["Miso"], "en"),
    ("Suggest a book I might enjoy.", ["Left Hand"], "en"),
    ("What car do I drive?", ["Corolla"], "en"),
    ("Where does my sister live?", ["Lisbon"], "en"),
    ("What does my wife do?", ["teacher"], "en"),
    ("What's my job?", ["nurse"], "en"),
    ("我妹妹什么时候结婚？", ["结婚"], "zh"),
    ("我喜欢喝什么茶？", ["乌龙"], "zh"),
    ("我的狗叫什么名字？", ["Biscuit"], "zh"),
    ("週末は何をしていますか？", ["山登り"], "ja"),
    ("私の誕生日はいつですか？", ["七月"], "ja"),
    ("私はどこに住んでいますか？", ["Manchester"], "ja"),
]

# A second life, written after ranking changes had been made on the first, to check that they carry over
# (`--set second`); its misses were read afterwards, so it is a dev set too (docs/benchmarks.md says which
# figure is the clean check).
LIFE_SECOND = [
    (0, "Hi, I'm Lena. I live in Bristol with my boyfriend Tom."),
    (5, "I'm a software engineer at a bank."),
    (12, "My brother Jonas is a chef in Berlin."),
    (30, "We adopted a rabbit called Pepper."),
    (45, "I'm vegetarian, I haven't eaten meat for ten years."),
    (70, "My mum's birthday is on the 3rd of May."),
    (95, "I've been learning Spanish on Duolingo."),
    (130, "I really enjoy climbing and bouldering."),
    (170, "My team lead is Grace."),
    (210, "I got promoted to senior engineer today!"),
    (250, "Tom and I moved to Cardiff last weekend."),
    (290, "I left the bank and joined a startup called Fernwood as a staff engineer."),
    (320, "My favourite film is Spirited Away."),
    (350, "I sold my bike, I cycle to work no more, I take the bus now."),
    (400, "Tom and I got engaged in Lisbon!"),
    (430, "I can't stand coriander."),
    (470, "我爸爸在上海开了一家书店。"),
    (500, "我每天早上喝一杯黑咖啡。"),
    (530, "毎朝ヨガをしています。"),
    (560, "私の猫の名前はモチです。"),
]

QUESTIONS_SECOND = [
    ("Where do I live?", ["Cardiff"], "en"),
    ("What is my boyfriend's name?", ["Tom"], "en"),
    ("Where does my brother work?", ["Berlin|chef"], "en"),
    ("What pet do I have?", ["rabbit|Pepper"], "en"),
    ("What's my rabbit called?", ["Pepper"], "en"),
    ("Do I eat meat?", ["meat|vegetarian"], "en"),
    ("When is my mum's birthday?", ["May"], "en"),
    ("What language am I learning?", ["Spanish"], "en"),
    ("Who is my team lead?", ["Grace"], "en"),
    ("Where do I work now?", ["Fernwood"], "en"),
    ("What's my job title?", ["staff engineer"], "en"),
    ("Recommend a movie for tonight.", ["Spirited Away"], "en"),
    ("How do I get to work?", ["bus"], "en"),
    ("Where did we get engaged?", ["Lisbon"], "en"),
    ("What should I avoid when cooking for me?", ["coriander|vegetarian"], "en"),
    ("What sport do I do?", ["climbing|bouldering"], "en"),
    ("我爸爸做什么工作？", ["书店"], "zh"),
    ("我早上喝什么？", ["咖啡"], "zh"),
    ("Where does Lena live?", ["Cardiff"], "en"),
    ("毎朝何をしていますか？", ["ヨガ"], "ja"),
    ("私の猫の名前は何ですか？", ["モチ"], "ja"),
    ("我住在哪里？", ["Cardiff"], "zh"),
]
# A third life, written on 2026-11-27 after the changes made on the second and before it was first run: their
# clean check (`--set third`); its misses were read afterwards, so it is a dev set too.
LIFE_THIRD = [
    (0, "Hello! My name is Kenji and I'm based in Vancouver."),
    (4, "I'm a pharmacist at a small drugstore downtown."),
    (15, "My husband Daniel works as an architect."),
    (33, "We have two kids, Hana and Leo."),
    (50, "I can't eat gluten, I have coeliac disease."),
    (80, "Our parrot is named Kiwi."),
    (110, "I play tennis every Sunday morning."),
    (140, "My best friend Marta lives in Seattle."),
    (180, "I'm reading a lot of science fiction lately, Ursula Le Guin is my favourite author."),
    (230, "I finished my first triathlon yesterday!"),
    (280, "We moved to Victoria last month."),
    (300, "I quit the drugstore and started working at Island Health as a clinical pharmacist."),
    (340, "I gave up tennis because of my knee, now I swim instead."),
    (380, "My car is a green Subaru Outback."),
    (420, "Daniel's birthday is on the 12th of March."),
    (470, "I hate spicy food."),
    (510, "我的儿子Leo开始学钢琴了。"),
    (540, "我每周三去学中文。"),
    (580, "私の母は大阪に住んでいます。"),
    (610, "毎晩日記を書いています。"),
]

QUESTIONS_THIRD = [
    ("Where do I live now?", ["Victoria"], "en"),
    ("What's my husband's name?", ["Daniel"], "en"),
    ("What does my husband do for a living?", ["architect"], "en"),
    ("What are my kids called?", ["Hana|Leo"], "en"),
    ("Is there anything I can't eat?", ["gluten"], "en"),
    ("What's my parrot's name?", ["Kiwi"], "en"),
    ("What sport do I do now?", ["swim"], "en"),
    ("Where does Marta live?", ["Seattle"], "en"),
    ("Recommend me a novel.", ["science fiction|Le Guin"], "en"),
    ("When did I do my first triathlon?", ["triathlon"], "en"),
    ("Where do I work?", ["Island Health"], "en"),
    ("What's my job?", ["pharmacist"], "en"),
    ("What car do I have?", ["Subaru"], "en"),
    ("When is Daniel's birthday?", ["March"], "en"),
    ("What food should I avoid ordering for me?", ["spicy|gluten"], "en"),
    ("Do I still play tennis?", ["tennis"], "en"),
    ("What instrument is my son learning?", ["钢琴"], "en"),
    ("我儿子在学什么？", ["钢琴"], "zh"),
    ("我每周三做什么？", ["中文"], "zh"),
    ("我丈夫叫什么名字？", ["Daniel"], "zh"),
    ("母はどこに住んでいますか？", ["大阪"], "ja"),
    ("毎晩何をしていますか？", ["日記"], "ja"),
]
# A fourth life, written on 2026-11-27 after the changes made on the third and before it was first run: their
# clean check (`--set fourth`). Messages as people type them: several facts in one, asides, lower case.
LIFE_FOURTH = [
    (0, "hey, I'm Priya. I live in Dublin with my partner Alex and our dog Rufus"),
    (6, "I teach maths at a secondary school, been doing it for six years"),
    (20, "Alex is a nurse, she works nights at St Vincent's."),
    (41, "I'm trying to go vegan this year, no more cheese for me!"),
    (66, "My brother Ravi just moved to Toronto for a job at a bank."),
    (95, "I've started running with a club on Tuesdays."),
    (130, "ugh my knee hurts, the physio said no running for a month"),
    (170, "I'm allergic to penicillin, found out the hard way."),
    (215, "We bought a house in Galway! Moving next month."),
    (250, "Finally moved into the Galway house, it's lovely."),
    (300, "I got a new job as head of maths at a school in Galway."),
    (340, "Rufus turned 5 today 🎂"),
    (390, "My mum's name is Lakshmi, she lives in Chennai."),
    (430, "I'm learning to play the cello, lessons every Saturday."),
    (480, "我最喜欢的菜是麻婆豆腐。"),
    (520, "我女朋友的生日是十月三号。"),
    (560, "来月、京都に旅行します。"),
    (600, "私は毎朝コーヒーを二杯飲みます。"),
]

QUESTIONS_FOURTH = [
    ("Where do I live?", ["Galway"], "en"),
    ("What's my partner's name?", ["Alex"], "en"),
    ("What's my dog called?", ["Rufus"], "en"),
    ("What does Alex do?", ["nurse"], "en"),
    ("What's my job now?", ["head of maths"], "en"),
    ("Am I vegan?", ["vegan"], "en"),
    ("Where does my brother live?", ["Toronto"], "en"),
    ("Can I go running at the moment?", ["running|knee"], "en"),
    ("What medicine am I allergic to?", ["penicillin"], "en"),
    ("How old is Rufus?", ["Rufus"], "en"),
    ("What is my mum's name?", ["Lakshmi"], "en"),
    ("Where does my mother live?", ["Chennai"], "en"),
    ("What instrument am I learning?", ["cello"], "en"),
    ("When are my cello lessons?", ["Saturday"], "en"),
    ("What should I cook tonight?", ["麻婆豆腐|vegan"], "en"),
    ("我最喜欢吃什么？", ["麻婆豆腐"], "zh"),
    ("我住在哪里？", ["Galway"], "zh"),
    ("来月どこに行きますか？", ["京都"], "ja"),
    ("毎朝何を飲みますか？", ["コーヒー"], "ja"),
    ("Where does Priya live?", ["Galway"], "en"),
]
# A fifth life, written on 2026-11-27 after the changes made on the fourth and before it was first run: their
# clean check (`--set fifth`).
LIFE_FIFTH = [
    (0, "Hi there, my name's Tomás and I'm from Seville, but I live in Lyon now."),
    (9, "I work for a video game studio called Brightforge, I'm a level designer."),
    (25, "My girlfriend Chloé is a doctor at the hospital in Lyon."),
    (48, "We adopted two cats last week, Pip and Olive."),
    (70, "I'm lactose intolerant so no milk in my coffee please."),
    (100, "My sister Lucía studies architecture in Madrid."),
    (140, "I've been playing chess online every evening."),
    (190, "My favourite band is Radiohead."),
    (230, "Just got back from Iceland, it was freezing!"),
    (260, "I stopped playing chess, now I'm into sudoku."),
    (300, "Quit Brightforge last week. Joined a small indie studio called Moth & Lantern as lead designer."),
    (340, "Chloé and I moved to Grenoble in the spring."),
    (380, "Olive had surgery on her paw yesterday, she's fine now."),
    (420, "My dad Javier retired from teaching this year."),
    (460, "我每个周末都去爬山。"),
    (500, "我的车是一辆白色的丰田。"),
    (540, "私の好きな食べ物はラーメンです。"),
    (570, "妹は来年結婚します。"),
]

QUESTIONS_FIFTH = [
    ("Where do I live now?", ["Grenoble"], "en"),
    ("Where am I from?", ["Seville"], "en"),
    ("Who do I work for?", ["Moth"], "en"),
    ("What's my job title?", ["lead designer"], "en"),
    ("What's my girlfriend's name?", ["Chloé"], "en"),
    ("What does Chloé do?", ["doctor"], "en"),
    ("What are my cats called?", ["Pip|Olive"], "en"),
    ("Can I have milk?", ["lactose"], "en"),
    ("What does my sister study?", ["architecture"], "en"),
    ("What puzzle game do I play these days?", ["sudoku"], "en"),
    ("Suggest some music I'd like.", ["Radiohead"], "en"),
    ("Where did I travel to recently?", ["Iceland"], "en"),
    ("What happened to Olive?", ["surgery"], "en"),
    ("What did my dad do for work?", ["teaching"], "en"),
    ("Where does Tomás live?", ["Grenoble"], "en"),
    ("我周末做什么？", ["爬山"], "zh"),
    ("我开什么车？", ["丰田"], "zh"),
    ("私の好きな食べ物は何ですか？", ["ラーメン"], "ja"),
    ("妹はいつ結婚しますか？", ["結婚"], "ja"),
    ("What car do I drive?", ["丰田"], "en"),
]
# A sixth life, written on 2026-11-27 after the changes made on the fifth and before it was first run: their
# clean check (`--set sixth`).
LIFE_SIXTH = [
    (0, "Morning! I'm Grace, a physiotherapist in Edinburgh."),
    (12, "My wife Joanne runs a bakery on Leith Walk."),
    (30, "Our son Callum is seven and obsessed with dinosaurs."),
    (55, "I've been vegetarian since university."),
    (85, "Started learning Italian on Tuesdays, it's harder than I thought"),
    (120, "Callum broke his arm at school today, poor kid."),
    (160, "I'm training for the Edinburgh marathon in May."),
    (200, "My favourite author is Ali Smith."),
    (240, "Joanne sold the bakery, she's going to teach baking classes instead."),
    (280, "We got a puppy! A border collie called Fern."),
    (320, "I switched clinics, I'm at the Royal Infirmary now."),
    (360, "Can't drink coffee anymore, doctor's orders. Green tea only."),
    (400, "My brother Euan lives in Glasgow with his husband."),
    (440, "Finished the marathon in 4 hours 12 minutes!"),
    (480, "我每天晚上给卡勒姆读书。"),
    (520, "我妻子的生日是八月二十日。"),
    (560, "毎週土曜日にテニスをしています。"),
    (590, "私の好きな映画は千と千尋の神隠しです。"),
]

QUESTIONS_SIXTH = [
    ("What's my job?", ["physiotherapist"], "en"),
    ("Where do I work now?", ["Royal Infirmary"], "en"),
    ("What does my wife do now?", ["teach"], "en"),
    ("What's my son's name?", ["Callum"], "en"),
    ("What is Callum into?", ["dinosaur"], "en"),
    ("Do I eat meat?", ["vegetarian"], "en"),
    ("What language am I learning?", ["Italian"], "en"),
    ("What happened to Callum at school?", ["arm"], "en"),
    ("What's my dog's name?", ["Fern"], "en"),
    ("What breed is my dog?", ["collie"], "en"),
    ("What can I drink?", ["tea"], "en"),
    ("Where does my brother live?", ["Glasgow"], "en"),
    ("What was my marathon time?", ["4 hours"], "en"),
    ("Recommend a book for me.", ["Ali Smith"], "en"),
    ("Where does Grace work?", ["Royal Infirmary"], "en"),
    ("我晚上做什么？", ["读书"], "zh"),
    ("我妻子的生日是哪天？", ["八月"], "zh"),
    ("土曜日に何をしますか？", ["テニス"], "ja"),
    ("私の好きな映画は何ですか？", ["千と千尋"], "ja"),
    ("When is my wife's birthday?", ["八月"], "en"),
]
# A seventh life, written on 2026-11-27 after the changes made on the sixth and before it was first run: their
# clean check (`--set seventh`).
LIFE_SEVENTH = [
    (0, "Hiya, name's Oskar, I'm a software tester at a fintech in Stockholm."),
    (10, "My boyfriend Mats plays bass in a jazz band."),
    (24, "I'm gluten free, coeliac since I was a kid."),
    (40, "Got a rescue cat last weekend! Her name is Smilla."),
    (75, "My grandmother turns 90 in June, big party planned."),
    (110, "Learning to sail this summer, first lesson on Saturday."),
    (150, "I hate horror films, they give me nightmares."),
    (190, "Mats got a job teaching music at a high school."),
    (230, "We moved to Uppsala, the commute is fine."),
    (270, "I'm now a QA lead at the same fintech."),
    (300, "Sold my old Volvo, bought an electric bike instead."),
    (340, "My favourite podcast is Hardcore History."),
    (380, "Smilla knocked my coffee over again this morning."),
    (420, "I've started going to a climbing gym twice a week."),
    (460, "我的奶奶住在斯德哥尔摩。"),
    (500, "我周末喜欢做肉桂卷。"),
    (530, "来年の春、日本に行く予定です。"),
    (560, "私の弟はベルリンで働いています。"),
]

QUESTIONS_SEVENTH = [
    ("What's my name?", ["Oskar"], "en"),
    ("What's my job title now?", ["QA lead"], "en"),
    ("Where do I live?", ["Uppsala"], "en"),
    ("What instrument does my boyfriend play?", ["bass"], "en"),
    ("What does Mats do for work now?", ["teaching|music"], "en"),
    ("Can I eat bread?", ["gluten|coeliac"], "en"),
    ("What's my cat called?", ["Smilla"], "en"),
    ("When is my grandmother's birthday?", ["June"], "en"),
    ("What am I learning this summer?", ["sail"], "en"),
    ("Recommend a film for tonight.", ["horror"], "en"),
    ("How do I get around now?", ["bike"], "en"),
    ("Do I still have a car?", ["Volvo"], "en"),
    ("Suggest a podcast.", ["Hardcore History"], "en"),
    ("What sport do I do?", ["climbing"], "en"),
    ("What did Smilla do this morning?", ["coffee"], "en"),
    ("我奶奶住在哪里？", ["斯德哥尔摩"], "zh"),
    ("我周末喜欢做什么？", ["肉桂卷"], "zh"),
    ("来年の春、どこに行きますか？", ["日本"], "ja"),
    ("弟はどこで働いていますか？", ["ベルリン"], "ja"),
    ("Where does my grandmother live?", ["斯德哥尔摩"], "en"),
]
# An eighth life, written on 2026-11-27 (a later session) before that session's changes to the offline model:
# their clean check (`--set eighth`).
LIFE_EIGHTH = [
    (0, "hello! I'm Nadia, I teach chemistry at a secondary school in Leicester."),
    (12, "my son Idris is 7, he's obsessed with dinosaurs"),
    (30, "I can't eat shellfish, I'm allergic."),
    (55, "We got a tortoise called Gus. He's older than me lol"),
    (80, "My husband Karim drives a taxi."),
    (115, "Doing the couch to 5k programme, week 3 now."),
    (150, "I switched to teaching part time, Mondays to Wednesdays."),
    (190, "Karim started his own removals business."),
    (230, "Idris broke his arm at football, he's in a cast for six weeks."),
    (270, "We're moving to Nottingham in August, new school for Idris."),
    (300, "The move is done, we're in Nottingham now."),
    (340, "My best friend Hana is getting married in Kyoto next spring."),
    (380, "I've been listening to a lot of jazz, Nina Simone mostly."),
    (420, "Gave up coffee, only green tea now."),
    (450, "我妈妈每年冬天都去开罗。"),
    (480, "我最近在学阿拉伯语书法。"),
    (510, "夫はサッカーが大好きです。"),
    (540, "息子の誕生日は十一月五日です。"),
]

QUESTIONS_EIGHTH = [
    ("What's my name?", ["Nadia"], "en"),
    ("What subject do I teach?", ["chemistry"], "en"),
    ("Which days do I work?", ["Monday"], "en"),
    ("How old is my son?", ["7"], "en"),
    ("What is Idris into?", ["dinosaur"], "en"),
    ("What am I allergic to?", ["shellfish"], "en"),
    ("What's our tortoise called?", ["Gus"], "en"),
    ("What does my husband do now?", ["removals"], "en"),
    ("What happened to Idris's arm?", ["broke|cast"], "en"),
    ("Where do I live now?", ["Nottingham"], "en"),
    ("Whose wedding is in Kyoto?", ["Hana"], "en"),
    ("Suggest some music for me.", ["jazz|Nina Simone"], "en"),
    ("What do I drink these days?", ["green tea"], "en"),
    ("How is my running going?", ["5k"], "en"),
    ("我妈妈冬天去哪里？", ["开罗"], "zh"),
    ("我在学什么？", ["书法"], "zh"),
    ("夫の好きなスポーツは何ですか？", ["サッカー"], "ja"),
    ("息子の誕生日はいつですか？", ["十一月"], "ja"),
    ("When is my son's birthday?", ["十一月|November"], "en"),
    ("What sport does my husband love?", ["サッカー|football"], "en"),
]
# A ninth life, written on 2026-11-27 after that session's changes and before its own first run: their clean
# check (`--set ninth`).
LIFE_NINTH = [
    (0, "hey there, Bruno here. I'm a paramedic in Porto."),
    (9, "My girlfriend Inês is a vet."),
    (20, "Vegetarian since 2019, no fish either."),
    (45, "We adopted a greyhound! Her name is Luna."),
    (70, "my dad turns 60 on the 2nd of October"),
    (100, "Been learning the drums for a month, my neighbours hate me."),
    (140, "I really dislike musicals."),
    (180, "Inês opened her own clinic in Matosinhos."),
    (220, "Luna hurt her leg chasing a cat, she's limping."),
    (260, "Bought a flat in Braga, moving in December."),
    (300, "We've moved, Braga is home now."),
    (330, "I left the ambulance service, I'm a firefighter now."),
    (370, "Favourite band at the moment: Arctic Monkeys."),
    (410, "Sold my motorbike, I take the train to work these days."),
    (450, "我姐姐在伦敦当护士。"),
    (490, "我每个星期天去游泳。"),
    (520, "母はリスボンに住んでいます。"),
    (550, "娘が生まれました！名前はマヤです。"),
]

QUESTIONS_NINTH = [
    ("What's my name?", ["Bruno"], "en"),
    ("What's my job now?", ["firefighter"], "en"),
    ("What does my girlfriend do?", ["vet|clinic"], "en"),
    ("Can I eat salmon?", ["vegetarian|fish"], "en"),
    ("What's our dog called?", ["Luna"], "en"),
    ("When is my dad's birthday?", ["October"], "en"),
    ("What instrument am I learning?", ["drums"], "en"),
    ("Recommend a show for date night.", ["musicals"], "en"),
    ("Where is Inês's clinic?", ["Matosinhos"], "en"),
    ("What happened to Luna?", ["leg|limping"], "en"),
    ("Where do I live now?", ["Braga"], "en"),
    ("How do I get to work?", ["train"], "en"),
    ("Suggest a band I might like.", ["Arctic Monkeys"], "en"),
    ("Do I still have a motorbike?", ["motorbike"], "en"),
    ("我姐姐做什么工作？", ["护士"], "zh"),
    ("我星期天做什么？", ["游泳"], "zh"),
    ("母はどこに住んでいますか？", ["リスボン"], "ja"),
    ("娘の名前は何ですか？", ["マヤ"], "ja"),
    ("What's my daughter's name?", ["マヤ|Maya"], "en"),
    ("Where does my mother live?", ["リスボン|Lisbon"], "en"),
]
SETS = {"first": (LIFE, QUESTIONS), "second": (LIFE_SECOND, QUESTIONS_SECOND), "third": (LIFE_THIRD, QUESTIONS_THIRD),
        "fourth": (LIFE_FOURTH, QUESTIONS_FOURTH), "fifth": (LIFE_FIFTH, QUESTIONS_FIFTH),
        "sixth": (LIFE_SIXTH, QUESTIONS_SIXTH), "seventh": (LIFE_SEVENTH, QUESTIONS_SEVENTH),
        "eighth": (LIFE_EIGHTH, QUESTIONS_EIGHTH), "ninth": (LIFE_NINTH, QUESTIONS_NINTH)}


def answered_at(results: list[dict], words: list[str]) -> int | None:
    for k, r in enumerate(results, 1):
        text = r["memory"].lower()
        if all(any(alt.lower() in text for alt in w.split("|")) for w in words):
            return k
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--show-misses", action="store_true")
    ap.add_argument("--set", choices=sorted(SETS), default="first", help="which life (default the first)")
    ap.add_argument("--raw", action="store_true",
                    help="add each statement as it was said (infer=False): the ranking alone, no extraction")
    args = ap.parse_args()
    from memoryx import Memory
    from memoryx.settings import Settings

    tmp = tempfile.TemporaryDirectory(prefix="memoryx-everyday-") if args.data_dir is None else None
    data_dir = Path(tmp.name) if tmp else args.data_dir
    user = f"everyday-{args.set}" + ("-raw" if args.raw else "")
    life, questions = SETS[args.set]
    m = Memory(Settings(data_dir=data_dir), llm="offline")
    try:
        t0 = time.perf_counter()
        if not m.get_all(user_id=user, limit=1)["results"]:
            for day, text in life:
                when = (START + timedelta(days=day)).isoformat()
                m.add([{"role": "user", "content": text, "timestamp": when}], user_id=user, infer=not args.raw)
        added = time.perf_counter() - t0
        rows = []
        for question, words, lang in questions:
            results = m.search(question, user_id=user, limit=3, now=NOW)["results"]
            rows.append((question, lang, answered_at(results, words), [r["memory"] for r in results]))
        print(f"everyday questions ({args.set} set): {len(life)} statements (added in {added:.1f} s, infer={not args.raw}, offline model, "
              f"graph on), {len(rows)} questions")
        for lang in ("all", "en", "zh", "ja"):
            sel = [r for r in rows if lang in ("all", r[1])]
            top1 = sum(1 for r in sel if r[2] == 1) / len(sel)
            top3 = sum(1 for r in sel if r[2] is not None) / len(sel)
            print(f"  {lang:4s} n={len(sel):2d}  top-1 {top1:.2f}  top-3 {top3:.2f}")
        for question, lang, k, got in rows:
            if k != 1 and args.show_misses:
                print(f"  miss ({'rank ' + str(k) if k else 'not in top 3'}): {question} -> {got}")
    finally:
        m.close()
        if tmp:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
