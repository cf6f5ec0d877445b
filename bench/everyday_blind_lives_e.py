"""Blind everyday lives (E), written without reading the system's code: a chatty, sarcastic freelance photographer in
Bristol with an ex, a new girlfriend, a teenage nephew he mentors and a van that keeps dying (English); a retired
Chinese teacher in Hangzhou with grandchildren, a husband with heart trouble, a dance group and trips (Chinese); an
American in Osaka married to a Japanese man, eikaiwa teacher turned game localizer, who practises Japanese mid-message
and is asked partly in Japanese (English/Japanese).
Each life: (days after the bench's START, what the user said[, the assistant's reply]); its questions: (question,
words the answering memory must contain ("a|b": either), language)."""

from __future__ import annotations

# Callum Reeves, 38, freelance photographer in Bristol; ex Hannah -> girlfriend Priya; nephew Kai; vans; moves.
LIFE_THIRTYNINTH = [
    (0, "Alright? Callum here, 38, freelance photographer in Bristol, mostly weddings and corporate headshots, "
        "which is exactly as glamorous as it sounds. Can you help me write a reminder email to Harbourside Events "
        "Ltd? They're 45 days late on a £1,200 invoice. Polite, but with teeth.",
     "Sure. Here's a firm but friendly version that restates the invoice number, the original due date, and asks "
     "for payment within seven days."),
    (12, "Need a shot list for a product shoot on Thursday. Client is Clifton Gin Co, they want moody bottle shots "
         "for their new rhubarb gin, dark slate, lots of drama. Oh and the van's clutch went on the M32 this "
         "morning, so I'll be lugging lights around on the bus like a pack mule. Living the dream."),
    (30, "It has rained for nine days straight. Bristol is really committing to the grey aesthetic this year."),
    (45, "Bit of a weird one. My ex Hannah is moving up to Leeds next month and we still haven't sorted out who "
         "keeps Biscuit, the cat we got together. Ginger tom, six years old, thinks he's a dog. How do grown "
         "adults do pet custody without it turning into a Netflix true crime series?",
     "Think about who can give him the most stable routine, and whether a long move would stress an older cat. It "
     "helps to agree on it in writing either way."),
    (60, "My nephew Kai, my sister Jo's lad, he's 15, has decided he wants to get into photography, so I've said "
         "I'll take him out shooting every other Saturday. I've given him my old Canon 600D. Can you suggest some "
         "first assignments that won't bore a teenager rigid?"),
    (80, "Pricing question. I charge £350 for a full corporate day, which my accountant mate Steve describes as "
         "'criminally low'. What do freelancers in the South West usually charge?"),
    (95, "Right, can you help me write an Instagram caption for a wedding I shot at Ashton Court on Saturday? "
         "Couple are Mo and Ellie, gorgeous light, one rogue swan. Also, update on the cat saga: Hannah's taking "
         "Biscuit with her to Leeds after all. Which, fine. The flat's very quiet."),
    (110, "So I've met someone. Priya. She's a paediatric nurse at the Bristol Royal Infirmary, vegetarian, and "
          "she laughs at my jokes, so her judgement is clearly questionable. Can you suggest somewhere on "
          "Gloucester Road for a third date on Saturday that isn't a pub quiz?",
     "Try a small plates place with good veggie options, or a late gallery opening followed by dessert."),
    (130, "Prepping a picnic flat lay for Crumbs magazine. Which fruits photograph well? Not kiwi though, I'm "
          "allergic, my mouth goes itchy and my lips swell up, and I refuse to die for a flat lay."),
    (150, "Van's in the garage AGAIN. Alternator this time, £480. The Transit has done 190,000 miles and I call "
          "her Brenda. At what point do I admit Brenda is dead and I'm just paying for her funeral in instalments?",
     "A common rule of thumb is when a year's repairs approach a third of the cost of a decent replacement."),
    (170, "Kai got a shot of a heron at Eastville Park that's honestly better than half my portfolio. He wants to "
          "enter a young wildlife photographer competition, deadline is December 8. Help him write a short caption "
          "about it? He's very 'it's not a big deal' about it, which means it's a massive deal."),
    (190, "Landed a proper contract! Avon Wildlife Trust want me for their annual report, 12 shoot days spread "
          "across the year. Can you help me draft a rough schedule by season? Also I've put my day rate up to £425 "
          "for new clients, thanks for the shaming."),
    (210, "Priya made me watch Love Island. I have never felt so old in my life."),
    (230, "Moving flats! Leaving Easton for a two-bed in Bedminster just off North Street, £1,350 a month, and the "
          "spare room becomes my edit suite. Move date is the 1st of March. Can you give me a checklist for moving "
          "with about forty grand of camera gear without crying?"),
    (260, "Kai got his GCSE results, a 9 in Art! In September he's starting at City of Bristol College doing a "
          "BTEC in Creative Media. His birthday is 3rd August, can you suggest a second-hand lens that won't "
          "bankrupt his favourite uncle?"),
    (290, "RIP Brenda. Scrapped her for £300 and bought a 2019 Vauxhall Vivaro off a plumber in Keynsham for "
          "£9,800. Any tips for kitting out the back with racking for light stands?"),
    (320, "Priya's moving in with me in November, and her cat Mango is coming too, so I'm a cat person again by "
          "marriage-adjacent means. She does night shifts Wednesday to Friday, so I need to stop editing with the "
          "telly on loud. Can you suggest a decent pair of headphones for editing?"),
    (350, "Bumped into Hannah at Temple Meads. She's engaged to some bloke called Rob Tanner. Weirdly I'm fine "
          "about it. Anyway, can you recommend a decent gimbal under £300?"),
    (380, "My back is wrecked from hauling gear. The physio at Southville, Gemma, says twice a week for a month "
          "and no lifting the big lighting cases on my own. She's terrifying. Stretches I can do between shoots?"),
    (410, "Clifton Gin Co have gone bust, owing me £2,100. Small claims court or do I just write it off and drink "
          "about it?",
     "If they've entered administration you'd register as an unsecured creditor rather than go to small claims; "
     "ask the administrator for a proof of debt form."),
    (470, "I'm renting a little studio unit at Paintworks, £420 a month, sharing it with a videographer called Dev "
          "Malhotra. Can you help me write a studio rules sign that doesn't sound passive-aggressive? "
          "Aggressive-aggressive is fine."),
    (500, "Kai is second-shooting weddings with me now, I pay him £80 a day. Proudest uncle moment. After college "
          "he wants to do a photography degree at Falmouth. Can you help me write him a reference?"),
    (530, "The Vivaro has a warning light. EGR valve, apparently. Two years of vans, two years of misery. Anyway, "
          "my mate's stag do is in Cardiff on 14 June, can you give me a cheap itinerary for 8 lads?"),
    (560, "Thinking of proposing to Priya in Lisbon in September, she's always wanted to go. Budget is about "
          "£2,400 for the whole trip. Can you plan a day where I can sneak off and collect the ring?"),
    (600, "Day rate is now £500 for corporate work, and Avon Wildlife Trust renewed me for another year. Can you "
          "help me lay out a simple rate card?"),
    (690, "She said yes! Sunset in Lisbon, I nearly dropped the ring off a viewpoint. We've booked the wedding for "
          "22 August next year at Arnos Vale, yes it's a cemetery, yes it's gorgeous, fight me. Kai is going to be "
          "my best man, God help us all."),
]

QUESTIONS_THIRTYNINTH = [
    ("Which client was dragging their feet on that overdue invoice when we first talked?", ["Harbourside"], "en"),
    ("What flavour was the gin I did the moody bottle shots for?", ["rhubarb"], "en"),
    ("What's my ex called?", ["Hannah"], "en"),
    ("Where does Biscuit live these days?", ["Leeds"], "en"),
    ("Which camera did I hand down to my nephew?", ["600D"], "en"),
    ("How often do I take Kai out with his camera?", ["every other Saturday"], "en"),
    ("What was I charging for a day before I raised my prices?", ["£350"], "en"),
    ("What's my corporate day rate at the moment?", ["£500"], "en"),
    ("What does Priya do for a living?", ["paediatric nurse"], "en"),
    ("Which fruit makes my mouth itch?", ["kiwi"], "en"),
    ("What was the nickname of my old Transit?", ["Brenda"], "en"),
    ("How much did the alternator cost me?", ["£480"], "en"),
    ("What van am I driving now?", ["Vivaro"], "en"),
    ("What bird did Kai photograph that blew me away?", ["heron"], "en"),
    ("Which charity took me on for their annual report?", ["Avon Wildlife"], "en"),
    ("What part of Bristol do I live in now?", ["Bedminster"], "en"),
    ("Which neighbourhood was I in before the move?", ["Easton"], "en"),
    ("What's Kai studying at college?", ["Creative Media"], "en"),
    ("What's my girlfriend's cat called?", ["Mango"], "en"),
    ("Which nights is Priya at work?", ["Wednesday to Friday"], "en"),
    ("Who is Hannah getting married to?", ["Tanner"], "en"),
    ("What's the name of my physio?", ["Gemma"], "en"),
    ("Where does Kai want to go for his degree?", ["Falmouth"], "en"),
    ("Where are Priya and I getting married?", ["Arnos Vale"], "en"),
]


# Wang Xiulan, 63, retired Chinese teacher in Hangzhou; husband Lao Zhou's heart stent; grandkids; dance; moves.
LIFE_FORTIETH = [
    (0, "你好，我姓王，叫王秀兰，今年63岁，退休前在杭州第十四中学教了三十多年语文。现在退休在家，平时帮儿子带孙子。"
        "孙子叫乐乐，今年5岁，在读幼儿园大班。我想每天晚上给他讲一个成语故事，你能帮我列一个从简单到难的成语清单"
        "吗？最好是适合五六岁小孩听的，故事里有小动物的更好。",
     "当然可以。可以从“守株待兔”“亡羊补牢”“画蛇添足”这类有动物、情节简单的开始，再慢慢过渡到“塞翁失马”这种需要讲道"
     "理的。"),
    (15, "我老伴老周，大名周建国，有高血压好多年了，一直在吃氨氯地平，每天早上一片。最近他老说头晕，"
         "昨天量了一下血压是150/95。他这个人脾气倔，最不爱去医院，说吃着药就没事。我想问问，血压这么高是不是要马上"
         "去看医生？还是先在家观察几天再说？",
     "吃着药血压还在150/95，又有头晕，建议这几天就去看医生调整用药，不要拖。如果出现胸痛、说话不清要马上去急诊。"),
    (30, "我参加了小区的广场舞队，叫“夕阳红舞蹈队”，一共十八个人，每天晚上七点到八点半在西湖文化广场跳。"
         "队长让我负责选曲子，你能推荐几首节奏欢快但是不要太快的歌吗？最好是我们这个年纪大家都熟悉的老歌。"),
    (45, "前几天我喉咙发炎，去社区医院看病，医生差点给我开了阿莫西林。幸好我想起来了，我对青霉素过敏，"
         "年轻的时候打针差点休克过。阿莫西林是不是也属于青霉素类的？以后看病我还要注意哪些药？",
     "是的，阿莫西林属于青霉素类，您要避开。头孢类也有一定交叉过敏的可能，看病时一定主动告诉医生您的过敏史。"),
    (60, "今天杭州下了好大的雨，曲院风荷的荷花开得正好，我和几个老姐妹撑着伞去拍了好多照片。年纪大了，就喜欢拍花。"),
    (80, "我女儿周婷在上海一家外企做财务，工作忙得很，一个月才回来一次。她去年生了个女儿，小名叫朵朵，"
         "现在一岁多了。婷婷说国庆节想带朵朵回杭州住一个星期。我想提前准备一下，一岁半的小孩家里要准备些什么东西？"
         "辅食怎么做比较好？"),
    (100, "老周终于肯去医院了，在浙大二院看的心内科，医生是陈主任。做了造影，说是冠心病，有一根血管堵了百分之七十，"
          "要放支架。手术定在11月8号。我心里很慌，放支架算大手术吗？术后要注意些什么？",
     "支架属于微创手术，一般从手腕或大腿根的血管进去，恢复比较快。术后关键是按时吃抗血小板的药，不能自己停。"),
    (120, "老周的支架放好了，放了一个，恢复得还可以。现在要吃的药一下子多了：阿司匹林、氯吡格雷、阿托伐他汀，"
          "再加上原来的降压药。我怕他吃乱了，你能帮我做一个每天吃药的时间表吗？早上、中午、晚上分开写，字要大一点，"
          "我打印出来贴在冰箱上。"),
    (140, "我们舞蹈队几个老姐妹商量明年三月去云南旅游，去大理和丽江，大概十天，预算每人八千块左右。老周刚做完手术，"
          "这次我就不带他了，让儿子照顾他几天。你能帮我们排一个不太累的行程吗？我们都六十多岁了，爬山是不行的。"),
    (160, "快过年了，儿子周磊一家回来吃年夜饭。儿媳妇小林是湖南人，无辣不欢，老周现在又要吃清淡的，我愁死了。"
          "能不能帮我设计一桌年夜饭，十个菜，一半辣一半清淡，大人小孩都能吃的？"),
    (180, "我去医院做了骨密度检查，医生说我有骨质疏松，让我每天吃钙片和维生素D，还要多晒太阳。可是我平时不喝牛奶，"
          "喝了就肚子胀、拉肚子，医生说是乳糖不耐受。不喝牛奶的话，还有什么办法补钙？"),
    (220, "跟你说个好消息！我们舞蹈队报名参加了西湖区中老年广场舞比赛，比赛定在6月15号，跳的是《最炫民族风》。"
          "我现在当上副队长了，要负责排练，每周二、周四下午加练两个小时。怎么才能让十几个队员动作整齐？"),
    (240, "乐乐九月份上小学了，在学军小学读一年级，离我们家走路十五分钟。我每天早上七点一刻送他，下午三点半去接。"
          "他刚上学不适应，哭了好几天，说想回幼儿园。怎么帮小孩适应小学生活？"),
    (260, "比赛拿了二等奖！大家高兴坏了，晚上一起去楼外楼吃了一顿，我还吃了两块东坡肉。"),
    (280, "老周去复查了，陈主任说支架情况挺好，但是让他一定要减肥。他现在82公斤，身高一米七，太胖了，"
          "医生说最好减到75公斤以下。你帮我给他定个一周的饮食计划吧，他最爱吃红烧肉，怎么都戒不掉。"),
    (300, "我报了老年大学的书法班，每周三上午九点到十一点，学的是楷书，临的是颜真卿的《多宝塔碑》。老师姓吴，"
          "说我握笔姿势不对，手腕太僵。毛笔字到底怎么握笔才对？有没有什么练习方法？"),
    (330, "我们家打算搬家了。现在住的上城区老房子在六楼，没有电梯，老周心脏不好，爬楼太吃力。儿子在滨江给我们看了一"
          "套电梯房，离他家很近，走路五分钟就到。打算明年春节前搬过去。搬家要注意些什么？老人家搬家有什么讲究吗？"),
    (360, "搬好了！新家在滨江区的江南春晓小区，12楼，朝南，阳光特别好。就是离西湖文化广场太远了，原来的舞蹈队我只能"
          "退出了，跟老姐妹们告别的时候还哭了一场。"),
    (390, "新小区也有个舞蹈队，在江边公园跳，每天早上六点半到七点半，跳的是水兵舞，我已经加入了。早上跳舞和晚上跳"
          "舞，哪个对身体更好一些？早上空腹跳可以吗？",
     "早上运动前最好吃点东西，比如半个鸡蛋或者一小片面包，避免低血糖。早晚锻炼差别不大，关键是坚持。"),
    (420, "老周吃氯吡格雷满一年了，陈主任说可以停了，现在只吃阿司匹林、阿托伐他汀和降压药。降压药也换了，"
          "从氨氯地平换成了缬沙坦，说是对肾更好。他体重也降到了77公斤，我挺高兴的，说明这一年没白管他。"),
    (450, "女儿说明年春天带我和老周去日本看樱花，四月初，去京都和大阪，一共七天。老周这辈子第一次出国，"
          "兴奋得不得了。去日本要办什么签证？老人出国带一大包药，过海关要注意什么？"),
    (520, "乐乐上二年级了，班主任刘老师说他数学很好，就是字写得太潦草。周末我送他去学围棋，每周六上午在少年宫。"
          "我自己是教语文的，想亲自教他练字，七岁的小孩每天练多长时间合适？"),
    (560, "日本回来了，京都的樱花真是好看，老周在清水寺走了一大圈也没喊累，看来心脏恢复得不错。下个月是我们师范毕业"
          "四十周年的同学聚会，在绍兴，10月20号。我想写一首小诗在聚会上念，你帮我改改好吗？"),
    (600, "老周下次复查约在3月12号上午，还是浙大二院，这次要做冠脉CT。做CT之前要不要空腹？他肾功能有点不太好，"
          "打造影剂会不会有影响？"),
    (640, "最近膝盖不舒服，去看了骨科，医生说是半月板磨损，跳水兵舞跳得太多了，让我少做跳跃的动作，一周最多跳三次。"
          "我有点不甘心，还有什么适合老年人、对膝盖友好的运动？"),
    (680, "今年是我和老周结婚四十周年，红宝石婚，日子是11月26号。孩子们想给我们办个小宴会。我想送老周一个礼物，"
          "他喜欢喝龙井茶、下象棋，你有什么好建议？"),
]

QUESTIONS_FORTIETH = [
    ("我退休前是在哪所学校教书的？", ["十四中"], "zh"),
    ("老周最早吃的是哪种降压药？", ["氨氯地平"], "zh"),
    ("老周现在的降压药换成什么了？", ["缬沙坦"], "zh"),
    ("我看病的时候哪类药不能用？", ["青霉素"], "zh"),
    ("我以前那个广场舞队叫什么来着？", ["夕阳红"], "zh"),
    ("婷婷在上海是做什么工作的？", ["财务"], "zh"),
    ("给老周看心脏的是哪位医生？", ["陈主任"], "zh"),
    ("老周放支架是哪天？", ["11月8"], "zh"),
    ("去云南玩我们每人打算花多少钱？", ["八千"], "zh"),
    ("儿媳妇老家是哪里的？", ["湖南"], "zh"),
    ("骨质疏松医生让我每天吃什么？", ["钙片|维生素D"], "zh"),
    ("我为什么不能喝牛奶？", ["乳糖不耐受"], "zh"),
    ("参加比赛的时候我们跳的是哪首曲子？", ["最炫民族风"], "zh"),
    ("那次广场舞比赛我们得了什么奖？", ["二等奖"], "zh"),
    ("乐乐在哪个小学念书？", ["学军"], "zh"),
    ("书法课一周上几次，是哪天？", ["周三上午"], "zh"),
    ("我练书法临的是哪本帖？", ["多宝塔"], "zh"),
    ("我们现在住在哪个小区？", ["江南春晓"], "zh"),
    ("我现在早上跳的是什么舞？", ["水兵舞"], "zh"),
    ("老周最近体重多少了？", ["77公斤"], "zh"),
    ("乐乐周末去少年宫学的是什么？", ["围棋"], "zh"),
    ("师范同学聚会是在哪个城市办？", ["绍兴"], "zh"),
    ("老周下一次去医院复查约的哪天？", ["3月12"], "zh"),
    ("我和老周的结婚纪念日是几月几号？", ["11月26"], "zh"),
]


# Megan Fujita, 31, American in Osaka married to Daiki; eikaiwa -> game localization; son Ren; visas; moves.
LIFE_FORTYFIRST = [
    (0, "Hi! I'm Megan, 31, originally from Portland, and I've been in Osaka for four years now. I teach at an "
        "eikaiwa called Bright Bridge English in Tennoji, mostly kids' classes in the evenings. My husband Daiki "
        "(大輝) is a 理学療法士 at a hospital in Abeno. Could you help me plan a Halloween vocab lesson for "
        "6-year-olds? よろしくお願いします！",
     "Of course! A 40-minute plan: flashcards with 8 words (ghost, witch, pumpkin...), a 'what's in the bag' touch "
     "game, then a mask-making craft while they practise 'I'm a ___!'"),
    (14, "Our son Ren (蓮) is 18 months old and he just got a spot at ひまわり保育園 near our apartment in Abeno!! "
         "Any tips for the 慣らし保育 week? I'm so nervous he'll cry the whole time and I'll cry in the genkan."),
    (30, "Quick question: my 配偶者ビザ expires on March 31 next year. When can I apply to renew it, and what "
         "documents do I need? The immigration office is out in Suminoe, right?",
     "Yes, the Osaka Regional Immigration Bureau is near Cosmosquare. You can usually apply from about three "
     "months before expiry; bring your residence card, passport, your husband's 住民票 and tax certificates, and a "
     "letter of guarantee."),
    (45, "My mother-in-law Keiko-san (恵子さん) is coming from Nara to stay for the weekend. She's lovely but she "
         "reorganizes my kitchen every single time lol. 今週末、お義母さんが泊まりに来ます。ちょっと緊張していま"
         "す。Is my Japanese right? And what's a nice dinner I can make that isn't too American?"),
    (60, "Can you help me with something for Daiki's work 飲み会 at an izakaya on Friday? I'm allergic to "
         "shellfish, shrimp especially, so how do I politely say 'I have a shellfish allergy, no shrimp or crab "
         "please'?",
     "You can say: 「すみません、甲殻類アレルギーがあるので、えびとかにを抜いていただけますか。」"),
    (80, "今日はとても暑かったです。38度！ I think I actually melted on the Midosuji line."),
    (100, "I signed up for JLPT N3 in December! 毎日30分勉強しています。Can you quiz me on some N3 grammar? Let's "
          "do ～ようにする and ～ことにする."),
    (120, "My father-in-law Masaru-san (お義父さんの勝さん) had a minor stroke last week. He's okay, but he's in "
          "the hospital in Nara for two weeks and Daiki goes every weekend. What do you bring someone in a "
          "Japanese hospital? I heard potted flowers are a no?",
     "Right, potted plants suggest 'taking root' in the hospital, so avoid them. Small snacks he's allowed, a "
     "towel set, or a photo of Ren are all nice."),
    (140, "Keiko-san keeps sending us 納豆 from a shop in Nara. 正直に言うと、納豆が大嫌いです。Daiki loves it. "
          "How do I say thank you without encouraging a lifetime supply?"),
    (160, "JLPT results came out... N3 合格しました！！ 142 out of 180! I guess N2 is next 笑"),
    (180, "Visa renewed! This time immigration gave me three years instead of one, so I can stop checking the date "
          "every week. Can you remind me what a 在留カード update involves at the ward office?"),
    (200, "BIG news: I got a job as a localization coordinator at Hoshino Games in Umeda! 来月から働きます。My "
          "last day at Bright Bridge is June 28. Salary goes from 2.6 million yen to 4.2 million a year. Can you "
          "help me write a goodbye note for my students' parents?",
     "Congratulations! Here's a warm note in simple English with a Japanese version underneath for the parents."),
    (220, "With the new job I work 9:30 to 6:30, so Ren is at 保育園 until 7 now with 延長保育. Daiki switched to "
          "early shifts so he can do pickup on Tuesdays and Thursdays. 私は月水金のお迎えです。Can you make us a "
          "simple weekly schedule?"),
    (250, "Ren caught 手足口病 at daycare so he's home for a few days. 熱は38.5度です。Is it okay to give him "
          "カロナール? His pediatrician is Dr. Nishimura at Nishimura Kids Clinic but they're closed today."),
    (280, "We adopted a cat!! A 三毛猫 from a shelter in Sakai, we named her Kinako (きなこ). She's about a year "
          "old and 3.1 kg. What do I need to buy before she comes home on Saturday?"),
    (310, "My manager at Hoshino, Tanaka-san, wants me to lead the English release of our farming game 'Sakura "
          "Valley Farm'. Launch is October 10. Can you help me set up a glossary template for the translators?"),
    (340, "We're buying a house!! A small 中古一戸建て in Suita, 3LDK, ten minutes from Esaka station, 3,280万円. "
          "We move in March, and Ren has to change daycare, 4月から新しい保育園です。Can you make me a moving "
          "checklist for Japan? 転出届 and all that."),
    (370, "Ren started at 江坂さくら保育園 this week. He's in the 2歳児クラス, his teacher is Yumi-sensei, and he "
          "already has a best friend named Haruto. 安心しました。"),
    (430, "Masaru-san is doing so much better, he walks with a cane now. Keiko-san wants all of us to go to an "
          "onsen in Arima for his 喜寿 (77th birthday) on November 3. Can you suggest a ryokan that's easy for "
          "someone with a cane?"),
    (460, "Kinako went to the vet today, she's 4.6 kg now. 先生に「ちょっと太りすぎ」と言われました。Diet food "
          "time, she's going to hate me."),
    (490, "I want to apply for 永住権. Daiki and I have been married six years. What documents do I need? His "
          "income certificate, tax records, a 身元保証書...?",
     "For spouses of Japanese nationals you'll typically need the application form, photos, your family register "
     "extract (戸籍謄本), 住民票, proof of income and tax payment for three years, and a guarantor."),
    (520, "I got promoted to localization lead at Hoshino! 年収480万円になりました。I'll be managing two "
          "translators, Kenji and Sophie. Any tips for a first-time manager?"),
    (560, "My mom Carol is flying in from Portland on April 5 for two weeks, her first time in Japan ever! "
          "京都と奈良に連れて行きたいです。Can you plan an itinerary that works with a toddler in tow?"),
    (640, "永住権が許可されました！！ No more visa renewals ever. We're celebrating with 焼肉 tonight."),
    (690, "Ren has started スイミング every Saturday morning at 10 and he's obsessed. He also announced he's going "
          "to be a 新幹線の運転士 when he grows up. Can you suggest some shinkansen picture books in Japanese?"),
]

QUESTIONS_FORTYFIRST = [
    ("What was the name of the English school I used to teach at?", ["Bright Bridge"], "en"),
    ("大輝の仕事って何だっけ？", ["理学療法士"], "ja"),
    ("Which daycare did Ren go to first?", ["ひまわり"], "en"),
    ("私って何のアレルギーがあるんだっけ？", ["shellfish|shrimp"], "ja"),
    ("Where do Daiki's parents live?", ["Nara"], "en"),
    ("お義父さんの名前、何だったっけ？", ["Masaru|勝さん"], "ja"),
    ("What food does Keiko-san send that I can't stand?", ["納豆"], "en"),
    ("How many points did I get on the N3?", ["142"], "en"),
    ("When did my first spouse visa run out?", ["March 31"], "en"),
    ("今働いている会社の名前は？", ["Hoshino"], "ja"),
    ("英会話の先生だった頃の年収はいくらでしたか？", ["2.6 million"], "ja"),
    ("How much do I make a year now?", ["480万"], "en"),
    ("Which days am I the one collecting Ren?", ["月水金"], "en"),
    ("蓮のかかりつけの小児科の先生は誰？", ["Nishimura"], "ja"),
    ("うちの猫の名前は何ですか？", ["Kinako|きなこ"], "ja"),
    ("How heavy is our cat now?", ["4.6"], "en"),
    ("今どこに住んでいますか？", ["Suita"], "ja"),
    ("What did we pay for the house?", ["3,280万"], "en"),
    ("蓮の今の保育園の担任の先生は誰？", ["Yumi"], "ja"),
    ("Who's my boss at the game company?", ["Tanaka"], "en"),
    ("農場ゲームの発売日はいつだった？", ["October 10"], "ja"),
    ("お義父さんの喜寿のお祝いはどこに行く予定？", ["Arima"], "ja"),
    ("Who are the two people on my team?", ["Kenji"], "en"),
    ("お母さんがアメリカから来るのはいつ？", ["April 5"], "ja"),
]
