"""Later lives of the everyday bench (run by bench/everyday_recall.py), each written before its own first run as
a clean check of the changes made before it: a nurse whose messages carry several facts each and whose facts
change by correction (the nineteenth), and a user who tells the assistant what to remember ("Remember that...",
"FYI", "Note:"), as people talk to a memory-enabled chatbot (the twentieth), questions asked as recall requests
(the twenty-first), a user who speaks Chinese (the twenty-second) and one who speaks Japanese (the twenty-third),
a small-business owner (the twenty-fourth), facts said inside requests (the twenty-fifth), an expat asked about
when (the twenty-sixth). Each life: (days after the bench's START, what the user said[, the assistant's reply]);
its questions: (question, words the answering memory must contain ("a|b": either), language)."""

from __future__ import annotations

# A nineteenth life, written on 2026-11-27 before any change of that session and before its
# own first run: the clean check of the eighteenth's changes (`--set nineteenth`). Several facts to a message,
# corrections, plans and past trips.
LIFE_NINETEENTH = [
    (0, "Hi! I'm Priya, 34, a nurse at Manchester Royal Infirmary. Married to Arjun, he's an accountant."),
    (6, "We have twin girls, Maya and Isha, they're 5."),
    (14, "I have asthma so I always carry an inhaler"),
    (25, "My manager Karen is making me do too many night shifts, ugh"),
    (40, "I'm vegetarian, have been since uni"),
    (60, "I play badminton every Thursday evening with colleagues"),
    (85, "Our anniversary is on 12 October, any gift ideas for Arjun?", "How about a personalised photo book?"),
    (110, "Karen left! My new manager is Tom, much nicer"),
    (140, "We drive a blue Skoda Octavia, it's due for its MOT"),
    (170, "Last summer we went to Crete with the girls, best holiday ever"),
    (200, "Actually I'm not fully vegetarian anymore, I started eating fish again"),
    (240, "We got a rabbit for the girls, his name is Biscuit"),
    (280, "I got a job in the ICU at Salford Royal, starting in March!"),
    (320, "Thinking of moving to Leeds next year to be closer to my parents"),
    (360, "Arjun is training for the Manchester marathon in April"),
    (400, "我对花生过敏。"),
    (430, "双胞胎女儿在学钢琴。"),
    (460, "夫の誕生日は5月20日です。"),
    (490, "週末はよく家族でハイキングに行きます。"),
]

QUESTIONS_NINETEENTH = [
    ("What's my name?", ["Priya"], "en"),
    ("How old am I?", ["34"], "en"),
    ("What's my husband's name?", ["Arjun"], "en"),
    ("What does my husband do?", ["accountant"], "en"),
    ("Where do I work now?", ["Salford"], "en"),
    ("Who is my manager?", ["Tom"], "en"),
    ("What are my daughters called?", ["Maya|Isha"], "en"),
    ("What health condition do I have?", ["asthma"], "en"),
    ("Do I eat fish?", ["fish"], "en"),
    ("When do I play badminton?", ["Thursday"], "en"),
    ("When is our wedding anniversary?", ["12 October"], "en"),
    ("What car do we have?", ["Skoda"], "en"),
    ("Where did we go last summer?", ["Crete"], "en"),
    ("What's the rabbit called?", ["Biscuit"], "en"),
    ("Where are we thinking of moving?", ["Leeds"], "en"),
    ("What is Arjun training for?", ["marathon"], "en"),
    ("我对什么过敏？", ["花生"], "zh"),
    ("女儿们在学什么？", ["钢琴"], "zh"),
    ("夫の誕生日はいつですか？", ["5月20日"], "ja"),
    ("週末は何をしますか？", ["ハイキング"], "ja"),
    ("What am I allergic to?", ["花生|peanut"], "en"),
]

# A twentieth life, written on 2026-11-27 together with the nineteenth and, like it, first run
# before any change of that session: a clean check of the eighteenth's changes (`--set twentieth`). The user tells
# the assistant what to keep. Its key for "Do I still go to the gym?" was widened after that run to the memory
# "No more gym for me" (which answers it), as the offline model keeps it apart from "I do yoga at home now".
LIFE_TWENTIETH = [
    (0, "Remember that I'm allergic to penicillin."),
    (3, "FYI my name's Kenji, I live in Berlin, in Kreuzberg."),
    (8, "Note: my wife's name is Lena and her birthday is on 3 April."),
    (15, "please remember I go to the gym Mon/Wed/Fri at 7am"),
    (25, "For future reference: I work remotely for Rakuten as a data engineer."),
    (40, "My son Yuki started kindergarten today!"),
    (60, "Keep in mind I don't drink alcohol."),
    (90, "Just so you know, we adopted a cat, her name is Mochi."),
    (120, "Update: I switched teams, I'm on the search team now."),
    (150, "Remember my bike lock code is 3812."),
    (190, "We moved to Prenzlauer Berg last weekend."),
    (230, "My favourite restaurant in Berlin is Cocolo Ramen."),
    (270, "Lena is pregnant! The baby is due in March."),
    (310, "I've started learning the guitar, my teacher is called Marco."),
    (350, "No more gym for me, I do yoga at home now."),
    (400, "覚えておいて：母は大阪に住んでいます。"),
    (440, "私の好きな季節は秋です。"),
    (480, "请记住，我每天早上喝绿茶。"),
    (520, "我的车是一辆白色的大众高尔夫。"),
]

QUESTIONS_TWENTIETH = [
    ("What am I allergic to?", ["penicillin"], "en"),
    ("What's my name?", ["Kenji"], "en"),
    ("Where do I live now?", ["Prenzlauer Berg"], "en"),
    ("When is my wife's birthday?", ["3 April"], "en"),
    ("Do I still go to the gym?", ["No more gym|yoga"], "en"),
    ("Who do I work for?", ["Rakuten"], "en"),
    ("What's my job?", ["data engineer"], "en"),
    ("What team am I on?", ["search team"], "en"),
    ("What's my cat's name?", ["Mochi"], "en"),
    ("Can I have a beer?", ["alcohol"], "en"),
    ("What's my bike lock code?", ["3812"], "en"),
    ("What's my favourite restaurant?", ["Cocolo"], "en"),
    ("When is the baby due?", ["March"], "en"),
    ("Who is my guitar teacher?", ["Marco"], "en"),
    ("What's my son's name?", ["Yuki"], "en"),
    ("母はどこに住んでいますか？", ["大阪"], "ja"),
    ("好きな季節は何ですか？", ["秋"], "ja"),
    ("我每天早上喝什么？", ["绿茶"], "zh"),
    ("我开什么车？", ["高尔夫"], "zh"),
    ("Where does my mother live?", ["大阪|Osaka"], "en"),
]

# A twenty-first life, written on 2026-11-27 after the changes made on the nineteenth and
# twentieth and before its own first run: their clean check (`--set twentyfirst`). The questions are asked as a
# user asks a chatbot to recall ("Do you remember ...", "Remind me ...").
LIFE_TWENTYFIRST = [
    (0, "Hey, I'm Wei Ling, I work in marketing at a bank in Singapore."),
    (5, "My boyfriend Marcus is a physiotherapist, we've been together 3 years"),
    (12, "I'm trying to eat less sugar, my dentist told me off lol"),
    (20, "We have a golden retriever called Toffee, she's 2"),
    (33, "My sister Mei just had a baby boy, his name is Ethan!", "Congratulations, you're an aunt!"),
    (50, "I do pilates on Monday and Wednesday evenings"),
    (75, "Booked a trip to Seoul in October with Marcus, so excited"),
    (100, "my laptop died, bought a new MacBook Air"),
    (130, "Marcus proposed!!! We're getting married next spring"),
    (160, "I'm allergic to shellfish, found out the hard way last night"),
    (190, "New job! I'm moving to a tech startup as head of marketing"),
    (220, "We're moving into a flat in Tiong Bahru next month"),
    (260, "Toffee hurt her paw at the park, vet says rest for two weeks"),
    (300, "My favourite podcast at the moment is Hidden Brain"),
    (340, "My dad is retiring in June after 35 years as a bus driver"),
    (380, "我妈妈住在槟城。"),
    (410, "我每个周末都去上烹饪课。"),
    (440, "彼氏の誕生日は8月8日です。"),
    (470, "日本語を勉強しています。"),
]

QUESTIONS_TWENTYFIRST = [
    ("Do you remember my name?", ["Wei Ling"], "en"),
    ("Remind me, what does my boyfriend do?", ["physiotherapist"], "en"),
    ("Where do I work now?", ["startup"], "en"),
    ("What's my dog called?", ["Toffee"], "en"),
    ("Do you remember my nephew's name?", ["Ethan"], "en"),
    ("Which evenings do I do pilates?", ["Monday"], "en"),
    ("Where am I going in October?", ["Seoul"], "en"),
    ("What laptop do I have?", ["MacBook"], "en"),
    ("Am I engaged?", ["proposed"], "en"),
    ("Can you suggest a seafood dish for dinner?", ["shellfish"], "en"),
    ("What's my new role?", ["head of marketing"], "en"),
    ("Where are we moving?", ["Tiong Bahru"], "en"),
    ("What happened to Toffee?", ["paw"], "en"),
    ("Any podcast I like?", ["Hidden Brain"], "en"),
    ("What did my dad do for work?", ["bus driver"], "en"),
    ("Remind me what my dentist said", ["sugar"], "en"),
    ("我妈妈住在哪里？", ["槟城"], "zh"),
    ("我周末做什么？", ["烹饪"], "zh"),
    ("彼氏の誕生日はいつですか？", ["8月8日"], "ja"),
    ("何を勉強していますか？", ["日本語"], "ja"),
    ("Where does my mum live?", ["槟城|Penang"], "en"),
]

# A twenty-second life, written on 2026-11-27 after the twenty-first's changes and before its
# own first run: their clean check (`--set twentysecond`). A user who speaks Chinese, asking mostly in Chinese.
LIFE_TWENTYSECOND = [
    (0, "你好，我叫李娜，在上海一家广告公司做设计师。"),
    (5, "我老公叫王磊，他是中学数学老师。"),
    (12, "我们有一个女儿，叫朵朵，今年四岁。"),
    (20, "我对猫毛过敏，所以不能养猫。"),
    (30, "我每周三晚上去练瑜伽。"),
    (45, "我最喜欢的电影是《千与千寻》。"),
    (60, "我们打算去成都旅游，想吃火锅。"),
    (80, "我不吃香菜，一点都不行。"),
    (100, "朵朵开始上幼儿园了，她很喜欢她的老师。"),
    (130, "我换工作了，现在在阿里巴巴做产品经理。"),
    (160, "我们搬家了，现在住在杭州。"),
    (200, "我妈妈下个月过六十岁生日。"),
    (240, "王磊最近在学弹吉他。"),
    (280, "我开始跑步了，每天早上跑三公里。"),
    (320, "我们买了一辆特斯拉Model 3。"),
    (360, "我的生日是十月八号。"),
    (400, "I'm learning English with an online tutor, twice a week."),
    (430, "朵朵的好朋友叫小米。"),
]

QUESTIONS_TWENTYSECOND = [
    ("我叫什么名字？", ["李娜"], "zh"),
    ("我现在在哪里工作？", ["阿里巴巴"], "zh"),
    ("我老公是做什么的？", ["数学老师"], "zh"),
    ("我女儿叫什么名字？", ["朵朵"], "zh"),
    ("我女儿几岁？", ["四岁"], "zh"),
    ("我对什么过敏？", ["猫毛"], "zh"),
    ("我什么时候练瑜伽？", ["周三"], "zh"),
    ("我最喜欢什么电影？", ["千与千寻"], "zh"),
    ("我们现在住在哪里？", ["杭州"], "zh"),
    ("给我推荐一道菜。", ["香菜"], "zh"),
    ("我妈妈多大了？", ["六十岁"], "zh"),
    ("王磊在学什么？", ["吉他"], "zh"),
    ("我每天早上做什么？", ["跑步"], "zh"),
    ("我们开什么车？", ["特斯拉"], "zh"),
    ("我的生日是哪天？", ["十月八号"], "zh"),
    ("朵朵的好朋友是谁？", ["小米"], "zh"),
    ("我们想去哪里旅游？", ["成都"], "zh"),
    ("What's my husband's name?", ["王磊"], "en"),
    ("Where do I live now?", ["杭州"], "en"),
    ("How often do I have English lessons?", ["twice a week"], "en"),
]

# A twenty-third life, written on 2026-11-27 together with the twenty-second and first run
# after the changes made on it: their clean check (`--set twentythird`). A user who speaks Japanese.
LIFE_TWENTYTHIRD = [
    (0, "はじめまして、佐藤健です。大阪で看護師をしています。"),
    (6, "妻の名前は美咲で、小学校の先生です。"),
    (14, "息子が二人います。上の子は大輝で八歳です。"),
    (25, "えびアレルギーがあります。"),
    (40, "毎週土曜日にサッカーをしています。"),
    (60, "好きな食べ物はラーメンです。"),
    (85, "家族で沖縄に旅行する予定です。"),
    (110, "犬を飼い始めました。名前はポチです。"),
    (140, "転職しました。今は京都の病院で働いています。"),
    (170, "京都に引っ越しました。"),
    (210, "最近、ギターを習い始めました。"),
    (250, "妻は来年から中学校で教えます。"),
    (290, "父は北海道に住んでいます。"),
    (330, "コーヒーはやめて、今は緑茶だけ飲んでいます。"),
    (370, "I'm studying English for a work trip to London in spring."),
    (410, "下の息子の蓮は四月から小学生になります。"),
]

QUESTIONS_TWENTYTHIRD = [
    ("私の名前は何ですか？", ["佐藤健"], "ja"),
    ("今どこで働いていますか？", ["京都の病院"], "ja"),
    ("妻の名前は？", ["美咲"], "ja"),
    ("妻の仕事は何ですか？", ["先生"], "ja"),
    ("上の息子は何歳ですか？", ["八歳"], "ja"),
    ("何のアレルギーがありますか？", ["えび"], "ja"),
    ("土曜日に何をしていますか？", ["サッカー"], "ja"),
    ("好きな食べ物は何ですか？", ["ラーメン"], "ja"),
    ("犬の名前は何ですか？", ["ポチ"], "ja"),
    ("今どこに住んでいますか？", ["京都"], "ja"),
    ("何を習い始めましたか？", ["ギター"], "ja"),
    ("父はどこに住んでいますか？", ["北海道"], "ja"),
    ("今もコーヒーを飲みますか？", ["緑茶|やめて"], "ja"),
    ("下の息子の名前は？", ["蓮"], "ja"),
    ("家族でどこに旅行しますか？", ["沖縄"], "ja"),
    ("What is my wife's name?", ["美咲"], "en"),
    ("Where does my father live?", ["北海道"], "en"),
    ("What am I allergic to?", ["えび"], "en"),
    ("Why am I studying English?", ["London"], "en"),
]

# A twenty-fourth life, written on 2026-11-27 after the twenty-second's and twenty-third's
# changes and before its own first run: the clean check of every change of that session (`--set twentyfourth`). A
# small-business owner, in English with a few Chinese and Japanese messages.
LIFE_TWENTYFOURTH = [
    (0, "Hi, I'm Rosa. I run a small bakery called Flour & Co in Porto with my brother Tiago."),
    (9, "Our best seller is the pastel de nata, we bake about 300 a day"),
    (18, "I'm coeliac, funny for a baker I know"),
    (30, "Tiago's wife Inês just had twins, a boy and a girl!"),
    (48, "We hired a new baker, her name is Joana, she starts Monday"),
    (70, "My accountant says we need to raise prices by 10% this year"),
    (95, "I've been swimming at the municipal pool three mornings a week"),
    (120, "Our landlord wants to double the rent, we might have to move the shop"),
    (150, "Found a new place for the bakery on Rua das Flores, signing the lease next week"),
    (180, "We moved the bakery, Rua das Flores is so much busier"),
    (210, "My partner Miguel is a firefighter, he works 24-hour shifts"),
    (240, "Miguel and I are adopting a cat from the shelter, a grey one called Nuvem"),
    (270, "I stopped swimming, my shoulder hurts, doing physio now"),
    (300, "Thinking about opening a second shop in Braga next year"),
    (330, "My mum turns 70 on 5 May, planning a surprise lunch"),
    (370, "我们的店在网上的评分是4.8分。"),
    (400, "我每天早上四点起床。"),
    (430, "来月、東京の製菓学校で講習を受けます。"),
]

QUESTIONS_TWENTYFOURTH = [
    ("What's my name?", ["Rosa"], "en"),
    ("What's the name of my bakery?", ["Flour & Co"], "en"),
    ("Who do I run the bakery with?", ["Tiago"], "en"),
    ("What sells best at the bakery?", ["pastel de nata"], "en"),
    ("Can I eat normal bread?", ["coeliac"], "en"),
    ("Who is our new baker?", ["Joana"], "en"),
    ("Where is the bakery now?", ["Rua das Flores"], "en"),
    ("Do I still go swimming?", ["stopped swimming"], "en"),
    ("What does my partner do?", ["firefighter"], "en"),
    ("What's our cat called?", ["Nuvem"], "en"),
    ("Where might I open a second shop?", ["Braga"], "en"),
    ("When is my mum's birthday?", ["5 May"], "en"),
    ("How much should we raise prices?", ["10%"], "en"),
    ("What did Tiago's wife have?", ["twins"], "en"),
    ("Why did we move the shop?", ["rent"], "en"),
    ("我们店的评分是多少？", ["4.8"], "zh"),
    ("我每天几点起床？", ["四点"], "zh"),
    ("来月どこで講習を受けますか？", ["東京"], "ja"),
    ("What time do I get up?", ["四点|4"], "en"),
]

# A twenty-fifth life, written on 2026-11-27 after the twenty-fourth's changes and before its
# own first run: their clean check (`--set twentyfifth`). Facts said inside requests, and questions in other words
# than the statements ("my spouse", "my employer", "my kid", "when did I ...").
LIFE_TWENTYFIFTH = [
    (0, "Can you help me plan meals for my family of four? My husband Omar is diabetic and our son hates broccoli."),
    (8, "I'm Leila by the way, I'm a pharmacist at Boots in Cardiff."),
    (16, "What should I get my daughter Yasmin for her 12th birthday? She's really into drawing."),
    (30, "Could you recommend a beginner running plan? I signed up for the Cardiff half marathon in October."),
    (45, "Help me write a complaint email, my car, a 2015 Ford Focus, failed its MOT again."),
    (70, "Any tips for sleeping better? I've been working night shifts since last month."),
    (100, "Can you suggest a book club pick? Our club meets on the first Tuesday of every month."),
    (130, "I need a gift idea for Omar, he's just been promoted to head of IT at the council."),
    (160, "How do I get my son Adam to read more? He's 9 and only wants to play Fortnite."),
    (200, "Write a short speech for my sister Nadia's wedding, it's on 14 June in Swansea."),
    (240, "Can you help me compare electric cars? We sold the Focus last week."),
    (280, "What's a good stretch routine? I hurt my back lifting boxes at work."),
    (320, "I'm changing jobs, I'll be a clinical pharmacist at the University Hospital from January. Any advice?"),
    (360, "Plan a weekend in Bath for us, we're celebrating our 15th anniversary."),
    (400, "我想学做中国菜，有什么简单的菜推荐吗？我不吃猪肉。"),
    (440, "娘のヤスミンが来年から日本語を習いたいそうです。いい教材はありますか？"),
]

QUESTIONS_TWENTYFIFTH = [
    ("What's my name?", ["Leila"], "en"),
    ("What's my spouse's health condition?", ["diabetic"], "en"),
    ("What vegetable does my son hate?", ["broccoli"], "en"),
    ("What is my daughter into?", ["drawing"], "en"),
    ("Which race did I sign up for?", ["half marathon"], "en"),
    ("Who is my employer now?", ["University Hospital"], "en"),
    ("When does my book club meet?", ["first Tuesday"], "en"),
    ("What does my husband do?", ["head of IT"], "en"),
    ("What game does my kid play?", ["Fortnite"], "en"),
    ("When is Nadia's wedding?", ["14 June"], "en"),
    ("Do we still have the Ford Focus?", ["sold the Focus"], "en"),
    ("How did I hurt my back?", ["lifting boxes"], "en"),
    ("How many years have we been married?", ["15th anniversary"], "en"),
    ("What shifts do I work?", ["night shifts"], "en"),
    ("How old is Adam?", ["9"], "en"),
    ("我不吃什么肉？", ["猪肉"], "zh"),
    ("ヤスミンは何を習いたいですか？", ["日本語"], "ja"),
    ("What does my daughter want to learn?", ["日本語|Japanese"], "en"),
]

# A twenty-sixth life, written on 2026-11-27 after the twenty-fifth's changes and before its
# own first run: the last clean check of that session (`--set twentysixth`). An expat working remotely, with
# questions about when things happened.
LIFE_TWENTYSIXTH = [
    (0, "Hello! Ben here, I'm a backend developer working remotely for a Dutch company, living in Lisbon."),
    (10, "I'm originally from Manchester, moved to Portugal for the sun haha"),
    (25, "Started learning Portuguese, my tutor Ana is very patient"),
    (40, "I adopted a rescue dog today, a mutt called Pipoca"),
    (70, "my girlfriend Sofia is a nurse at Santa Maria hospital"),
    (100, "I don't drink coffee, only herbal tea"),
    (130, "Pipoca has a vet appointment on Thursday for her vaccines"),
    (160, "I bought a motorbike, a Honda CB500, to get around the city"),
    (200, "Sofia and I moved in together, we're in a flat in Alfama now"),
    (240, "I got my Portuguese residency card today!"),
    (280, "My company was acquired, I now work for a bigger firm in Berlin, still remote"),
    (320, "I sold the motorbike, it was too dangerous in the rain"),
    (360, "I'm running the Lisbon half marathon in March"),
    (400, "我对芒果过敏。"),
    (430, "毎週金曜日にジムに行きます。"),
]

QUESTIONS_TWENTYSIXTH = [
    ("What's my name?", ["Ben"], "en"),
    ("What do I do for work?", ["backend developer"], "en"),
    ("Where am I from originally?", ["Manchester"], "en"),
    ("Who is my Portuguese tutor?", ["Ana"], "en"),
    ("When did I adopt my dog?", ["adopted"], "en"),
    ("What's my dog called?", ["Pipoca"], "en"),
    ("Where does my girlfriend work?", ["Santa Maria"], "en"),
    ("Should I order an espresso?", ["coffee"], "en"),
    ("When is Pipoca's vet appointment?", ["Thursday"], "en"),
    ("Do I still have the motorbike?", ["sold the motorbike"], "en"),
    ("Where do I live now?", ["Alfama"], "en"),
    ("Who do I work for now?", ["Berlin"], "en"),
    ("Did I get my residency?", ["residency card"], "en"),
    ("What race am I doing?", ["half marathon"], "en"),
    ("我对什么过敏？", ["芒果"], "zh"),
    ("金曜日に何をしますか？", ["ジム"], "ja"),
    ("What fruit am I allergic to?", ["芒果|mango"], "en"),
]
