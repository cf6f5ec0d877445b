"""Blind everyday lives (A), written without reading the ranking code: a terse, typo-prone backend developer turned
SRE in Chicago; a rambling, newly retired court stenographer in Yorkshire whose facts keep changing; a Chinese-Canadian
localization producer married to a Japanese baker who writes in English, Chinese and Japanese and moves to Osaka.
Each life: (days after the bench's START, what the user said[, the assistant's reply]); its questions: (question,
words the answering memory must contain ("a|b": either), language)."""

from __future__ import annotations

# Nico Albers, 29, backend dev (Go/Postgres) in Chicago, terse and typo-prone, girlfriend Hana, cats Pixel and Nullptr.
LIFE_TWENTYSEVENTH = [
    (0, "hey. nico here, 29, backend dev at Parcelry (logistics startup, chicago). mostly go + postgres. "
        "need help w/ a flaky test later",
     "Nice to meet you, Nico! Happy to dig into the flaky test whenever you're ready."),
    (12, "ugh, my landlord Dave raised rent to 1450 starting march. was 1300. can u draft a polite pushback email",
     "Sure. Here's a short, polite draft asking whether the increase can be phased in or matched to market rates..."),
    (25, "cat knocked coffee onto my keybaord AGAIN. pixel is a menace. tips for cat proofing a desk?"),
    (40, "whats a good weeknight dinner w/o shellfish - im allergic - and no cilantro, gf hana thinks it tastes "
         "like soap"),
    (55, "bouldering tue + thu nights at Crux Gym, climbing V4 now. goal is V5 by summer"),
    (70, "lol prod went down at 3am bc someone rotated the certs wrong. not me for once"),
    (88, "sister ilse is getting married sept 14 in utrecht. need to book flights, remind me to look in may",
     "Congrats to Ilse! I'll keep in mind that you want to look at flights in May."),
    (110, "wrist hurts from typing. physio (dr okafor) says its RSI, do nerve glides 3x a day + get a vertical mouse"),
    (150, "got an offer from Tessellate, SRE role, 138k. parcelry pays me 112k. thinking abt it"),
    (165, "accepted tessellate!! start june 3. last day at parcelry is may 24",
     "Congratulations on the new role! Good luck wrapping things up at Parcelry."),
    (180, "booked flights for the wedding: ORD -> AMS via reykjavik, leaving sept 10, back sept 18"),
    (200, "new job is nice but on call is 1 week in 5 and the pager goes off constantly. ugh"),
    (230, "weekend was good, just chilled and played factorio for like 14 hrs"),
    (260, "hana and i are moving in together!! found a 2br in lakeview, 1900/mo, move nov 1. finally out of the "
          "old place",
     "That's exciting! Want a moving checklist for November?"),
    (290, "adopted a 2nd cat, grey tabby, named him Nullptr. pixel is NOT happy abt it"),
    (330, "wedding was amazing. ilse's husband joost is a marine biologist, studies seagrass, cool guy"),
    (360, "quit bouldering for now bc wrist. swimming mon/wed/fri mornings 6:30 at the Y instead"),
    (400, "thinking about learning rust. book recs? already know go and a bit of c"),
    (450, "bday tomorrow, turning 30. hana got me a mechanical keyboard w/ brown switches, shes the best",
     "Happy early birthday, Nico! Brown switches are a great choice for long coding sessions."),
    (500, "promoted to senior SRE at tessellate! raise to 152k"),
    (540, "hana and i r going to japan in april, tokyo + kyoto, 12 days. she wants cherry blossoms"),
    (600, "dentist says i need a crown on the lower left molar. appt aug 8, dreading it"),
    (650, "also pixel had a vet visit, hes diabetic now. insulin shots twice a day. vet is dr brandt"),
    (690, "random q: whats the diff between a mutex and a semaphore again"),
]

QUESTIONS_TWENTYSEVENTH = [
    ("what's my landlord's name again?", ["Dave"], "en"),
    ("how much am I paying in rent these days?", ["1900"], "en"),
    ("what's my job title right now?", ["senior SRE"], "en"),
    ("when did I start at the new company?", ["june 3"], "en"),
    ("how much did Tessellate first offer me?", ["138k"], "en"),
    ("what did we call the grey cat?", ["Nullptr"], "en"),
    ("how often does Pixel need his shots?", ["twice a day"], "en"),
    ("who's the physiotherapist I saw for my wrist?", ["okafor"], "en"),
    ("what exercises was I told to do for the RSI?", ["nerve glides"], "en"),
    ("when is my sister getting married?", ["sept 14"], "en"),
    ("what does my brother-in-law do for work?", ["marine biologist"], "en"),
    ("what day do I fly home from the Netherlands?", ["sept 18"], "en"),
    ("any food allergies I should remember?", ["shellfish"], "en"),
    ("which herb does Hana hate?", ["cilantro"], "en"),
    ("what do I do for exercise now?", ["swimming"], "en"),
    ("how often am I on call?", ["1 week in 5"], "en"),
    ("where are Hana and I travelling in the spring?", ["tokyo"], "en"),
    ("when's the dentist?", ["aug 8"], "en"),
    ("what was my birthday present from Hana?", ["keyboard"], "en"),
    ("how old am I?", ["turning 30"], "en"),
    ("what grade was I climbing at the gym?", ["V4"], "en"),
    ("which neighborhood is our new apartment in?", ["lakeview"], "en"),
]

# Rosalind "Ros" Pike, 57, newly retired court stenographer in Harrogate, husband Malcolm a piano tuner; rambles.
LIFE_TWENTYEIGHTH = [
    (0, "Well hello there. My daughter Tamsin set this up for me, she says I'll find it useful. I'm Ros, Rosalind "
        "Pike, 57, and I've just this month taken early retirement after 31 years as a court stenographer at Leeds "
        "Crown Court, so I've suddenly got an awful lot of time on my hands. My husband Malcolm is a piano tuner, "
        "still working, he says he'll never retire because pianos don't tune themselves. We live in Harrogate, in "
        "the same semi we bought in 1996.",
     "Congratulations on your retirement, Ros! Thirty-one years is quite a career. Lovely to meet you."),
    (9, "Now, where was I. Our son Felix is 24 and lives up in Edinburgh where he does something with wind "
        "turbines that I don't fully understand, and Tamsin is 29, a paramedic in Bristol, so both of them miles "
        "away naturally. We've also got an old springer spaniel called Biscuit who is 13 and going a bit deaf, "
        "bless him."),
    (20, "Could you give me a nice recipe for Sunday lunch? I gave up red meat last year after my cholesterol came "
         "back high, though I still eat chicken and fish. Malcolm grumbled but he's come round. Oh, and nothing "
         "with mushrooms please, I can't stand the texture, never could.",
     "How about a lemon and thyme roast chicken with crispy potatoes and spring greens? No mushrooms in sight."),
    (34, "I've joined the Harrogate Community Choir! We rehearse Wednesday evenings at half seven in the Methodist "
         "hall on Oxford Street. I'm an alto, apparently, though I always thought I was a soprano. The choir "
         "mistress, Judith, is terrifyingly good and doesn't let anyone get away with mumbling."),
    (50, "Went to see Mum at Ashgrove House today. She's 88 and her memory is going, but she still knew who I was "
         "and she ate every crumb of the lemon drizzle I took. The staff are lovely, there's one carer called "
         "Precious whom she absolutely adores."),
    (66, "My knee has been getting worse, the left one, and the consultant, Mr Haddad, says I need a full "
         "replacement. He's put me down for the 12th of March at Harrogate District Hospital. I'm dreading it if "
         "I'm honest, but I can't keep hobbling round like this.",
     "That's a big step, but knee replacements usually bring a lot of relief. Would a pre-op checklist help?"),
    (80, "Been down at the allotment, plot 14B, most of the afternoon. The leeks are coming on beautifully but the "
         "broad beans have been absolutely hammered by blackfly. Malcolm built me a new cold frame out of old "
         "windows. Is there anything organic I can do about the blackfly?"),
    (95, "Big news, well, big for us: we've sold the camper van, Dolly, after eighteen years of holidays. Broke my "
         "heart a bit. We've bought a little electric car instead, a white Kia Niro, which Malcolm insists on "
         "calling 'the milk float'."),
    (110, "Sorry, I must correct myself. I told you Felix was 24, but he's actually 26, he'll be 27 in July. "
          "Tamsin laughed at me for days. Goodness, where do the years go. And it's maintenance planning for "
          "offshore wind farms, she tells me, for a company called Northsea Renewables."),
    (125, "We've booked a cruise to the Norwegian fjords for the end of May, leaving from Newcastle on the 24th, "
          "eight nights, with Malcolm's brother Derek and his wife Pat. Pat has already sent me a packing list, "
          "she's like that."),
    (140, "The hospital rang and the knee operation has been moved, they had some staffing problem. It's now the "
          "23rd of April instead of March. Which means I'll probably still be on crutches for the cruise, so we're "
          "having a rethink.",
     "That's frustrating. Being on crutches on a ship could be tricky, so a rethink sounds sensible."),
    (160, "Right, decision made. We've cancelled the Norway cruise (got most of the money back) and instead we'll "
          "do a gentler trip to Orkney in September, a self-catering cottage near Stromness, just Malcolm and me. "
          "Derek and Pat are going to Norway without us, which is probably for the best."),
    (175, "Oh, I'm rattled. I had a reaction to the antibiotics they gave me for a tooth abscess, all blotchy and "
          "itchy, and the GP, Dr Lindqvist, says I'm allergic to penicillin and it's now on my records. All those "
          "years taking it without a bit of trouble!"),
    (215, "Sad day. We had to let Biscuit go this morning. He was 14 and his kidneys had packed in. The vet, a "
          "lovely young woman, said we'd given him a wonderful life. The house is so quiet.",
     "I'm so sorry, Ros. Fourteen years is a long and loved life. Be gentle with yourselves."),
    (250, "Orkney was glorious, even the rain. We saw the Ring of Brodgar and Skara Brae and I ate my bodyweight in "
          "fudge. Malcolm got chatting to a man in a pub in Kirkwall who restores harmoniums, so that was him "
          "happy for three hours."),
    (280, "Choir has moved to Thursday nights now because the Methodist hall is being re-roofed, so we're at St "
          "Wilfrid's church hall instead, same time. Judith is fuming about the acoustics."),
    (310, "Well, we've done it, we've adopted a rescue greyhound. She's called Marigold, she's six, an ex-racer, and "
          "she sleeps about twenty hours a day. Malcolm says she's the only one in the house lazier than him.",
     "Marigold sounds wonderful! Retired greyhounds make lovely, gentle companions."),
    (380, "Tamsin's engaged! Her partner Owen proposed on top of Pen y Fan. The wedding's going to be next June, "
          "the 21st, in a barn near Hay-on-Wye. I've already started looking at hats, don't tell anyone."),
    (420, "Mum passed away peacefully on Sunday at Ashgrove. She was 89. I'm all right, really, it's been a long "
          "goodbye. The funeral is at St Mary's in Knaresborough on the 3rd.",
     "I'm very sorry about your mum, Ros. Please take care of yourself, and I'm here if you want to talk."),
    (470, "I've started volunteering at the library on Monday mornings, running a reading group for people with "
          "dementia, in Mum's memory I suppose. We read short poems aloud, they love Betjeman."),
    (520, "Something that's been on my mind: Malcolm and I have decided to downsize. We've had an offer accepted on "
          "a bungalow in Knaresborough with a big garden, so I'll give up the allotment. And we've sold the Kia, "
          "swapped it for Derek's old Skoda estate, which sounds daft but it fits Marigold's crate."),
    (560, "We've moved in! Boxes everywhere, but the garden gets the sun all afternoon. The new address is 7 Bond "
          "End, Knaresborough, in case I need it for anything. Marigold has already claimed the sofa."),
    (640, "Malcolm's finally cutting down to three days a week, Mondays to Wednesdays, which is as close to "
          "retirement as he'll ever get. He's talking about taking up bowls, heaven help us."),
    (690, "Just a natter really. Lovely sunny morning, sat in the garden with a coffee and the crossword. Nothing "
          "much to report."),
]

QUESTIONS_TWENTYEIGHTH = [
    ("What was my job before I retired?", ["stenographer"], "en"),
    ("What does my husband do for a living?", ["piano tuner"], "en"),
    ("How old is my son?", ["26", "Felix"], "en"),
    ("Which company is Felix working for?", ["Northsea"], "en"),
    ("What night is choir practice now?", ["Thursday"], "en"),
    ("What voice part do I sing in the choir?", ["alto"], "en"),
    ("What date did they move my knee operation to?", ["23rd of April"], "en"),
    ("What's the name of the knee consultant?", ["Haddad"], "en"),
    ("Which antibiotic am I allergic to?", ["penicillin"], "en"),
    ("What's our dog called?", ["Marigold", "greyhound"], "en"),
    ("What car are we driving these days?", ["Skoda"], "en"),
    ("Where was the cottage we rented in Orkney?", ["Stromness"], "en"),
    ("Which ancient sites did we visit on the islands?", ["Skara Brae"], "en"),
    ("What was the name of the carer Mum was so fond of?", ["Precious"], "en"),
    ("Who is Tamsin marrying?", ["Owen"], "en"),
    ("When is Tamsin's wedding?", ["21st"], "en"),
    ("What's our address now?", ["7 Bond End"], "en"),
    ("Is there any food I really don't like?", ["mushrooms"], "en"),
    ("What number is my allotment plot?", ["14B"], "en"),
    ("Which morning do I run the reading group at the library?", ["Monday", "reading group"], "en"),
    ("Which days is Malcolm working now?", ["three days"], "en"),
    ("Why did I stop eating red meat?", ["cholesterol"], "en"),
]

# Leo Chen (Chen Haoran), 34, Chengdu-born localization producer in Vancouver, wife Yuki from Sapporo; EN/ZH/JA.
LIFE_TWENTYNINTH = [
    (0, "Hi! I'm Leo, Chen Haoran on my passport, 34, and I work as a localization producer at Driftwood Games "
        "in Vancouver. I grew up in Chengdu and moved to Canada at 19. My wife Yuki is from Sapporo, so our house "
        "is a three-language mess 😄",
     "Nice to meet you, Leo! A three-language household sounds like a lot of fun."),
    (10, "我妈妈下个月要从成都飞过来，住三个月，我得把书房收拾成客房。她不会说英语，有点担心她在这边会无聊。",
     "可以帮她找找温哥华的华人社区活动，比如广场舞或者中文读书会，这样她不会太无聊。"),
    (22, "Can you suggest a snack for a team meeting? No peanuts please, I'm allergic, the real kind with an "
         "EpiPen and everything."),
    (35, "由紀の誕生日は11月8日なんだけど、今年は何かサプライズしたいな。甘いものより、しょっぱいものが好きなタイプ。"),
    (48, "We adopted a rabbit! Lop-eared and brown, we named him Niangao (年糕, rice cake) because he's round and "
         "sticks to us all day."),
    (60, "每周六早上我跟几个同事去Richmond打羽毛球，九点到十一点，最近膝盖有点不舒服。"),
    (75, "Yuki finally opened her own bakery stall at the Granville Island market, open Thursdays to Sundays. Her "
         "yuzu cheesecake sold out in two hours!",
     "That's fantastic, congratulations to Yuki! Selling out on day one is a great sign."),
    (90, "お義母さんの美智子さんが、来年の4月に札幌から遊びに来ることになった。2週間くらい滞在する予定。"),
    (110, "Doctor's visit today: cholesterol is fine but my vitamin D is super low, Dr. Patel told me to take "
          "2000 IU a day over the winter."),
    (130, "我们决定春节回成都过年，1月25号出发，2月8号回来。由纪第一次去，她有点紧张，怕吃不了辣。",
     "成都的菜也有不辣的，比如钟水饺和甜水面可以少放辣，可以提前跟家里说一声。"),
    (160, "成都之行很开心，我妈特别喜欢由纪，还手把手教她包抄手。就是我爸血压高，医生让他少吃盐，他根本不听。"),
    (170, "Big news: Yuki is pregnant!! Due date is around August 20. We're both terrified and thrilled.",
     "Congratulations to you both! That's wonderful news."),
    (230, "Got promoted to senior localization producer, I'm leading the Japanese and Korean teams now."),
    (290, "She's here! Our daughter was born on August 17, 3.2 kg, three days early. Everyone is healthy. We "
          "called her Rin, and her Chinese name is 陈凛.",
     "Congratulations, Leo! Welcome to the world, little Rin."),
    (320, "凛の夜泣きがすごくて、3時間おきに起きる。由紀と交代で寝てるけど、もう限界かも…"),
    (350, "I've decided to leave Driftwood. Got an offer from Kitsune Interactive in Osaka as localization "
          "director, so we'd move next spring. Yuki is happy to be closer to her mom."),
    (420, "Quit badminton, my knee is done for and the physio says no more jumping. Doing yoga on Tuesday and "
          "Thursday evenings now instead."),
    (460, "大阪に引っ越した！吹田市の3LDKのマンションで、駅から徒歩7分。年糕も無事に飛行機に乗れたよ。",
     "引っ越しお疲れさまでした！年糕も無事でよかったですね。"),
    (500, "First day at Kitsune was a blur. My boss, Tanaka-san, speaks great English, but I'm trying to use "
          "Japanese in meetings."),
    (540, "凛开始上保育园了，每天早上八点送过去，下午五点去接。第一周她哭得很厉害，我们也心疼。"),
    (580, "Yuki is thinking of reopening the bakery here, maybe a small shop near our station. She's still testing "
          "recipes, and black sesame scones are the current winner."),
    (620, "来月の連休に家族で金沢に行く予定。兼六園と21世紀美術館に行きたい。凛にとっては初めての旅行！"),
    (660, "体检结果出来了，维生素D还是偏低，尿酸也有点高，医生建议我少喝啤酒。"),
    (690, "Just a quiet Sunday, Rin is napping and I'm finally reading a book. Nice."),
]

QUESTIONS_TWENTYNINTH = [
    ("我妈妈这次来温哥华要住多久？", ["三个月"], "zh"),
    ("Am I allergic to anything?", ["peanut"], "en"),
    ("When is Yuki's birthday?", ["11月8日"], "en"),
    ("我们家兔子叫什么名字？", ["Niangao"], "zh"),
    ("我现在还打羽毛球吗？", ["yoga"], "zh"),
    ("Which days was Yuki's market stall open in Vancouver?", ["Thursdays"], "en"),
    ("When is my mother-in-law coming to visit?", ["4月"], "en"),
    ("ビタミンDはどのくらい飲むように言われた？", ["2000 IU"], "ja"),
    ("What date did we fly to Chengdu for Chinese New Year?", ["1月25"], "en"),
    ("我妈教由纪做了什么？", ["抄手"], "zh"),
    ("我女儿的中文名字是什么？", ["陈凛"], "zh"),
    ("What's my daughter's birthday?", ["August 17"], "en"),
    ("When was the baby due originally?", ["August 20"], "en"),
    ("What's my role at the Osaka company?", ["director"], "en"),
    ("Which area of Osaka did we move to?", ["吹田"], "en"),
    ("新しい上司の名前は何だっけ？", ["Tanaka"], "ja"),
    ("凛の保育園のお迎えは何時？", ["五点"], "ja"),
    ("由纪最近在试做什么点心？", ["black sesame"], "zh"),
    ("Where are we going on the long weekend next month?", ["金沢"], "en"),
    ("医生说我要少喝什么？", ["啤酒"], "zh"),
    ("How old was I when I moved to Canada?", ["19"], "en"),
    ("What's my mother-in-law's name?", ["美智子"], "en"),
]
