"""Blind everyday lives (D), written without reading the system's code: a Melbourne nurse who changes wards, with a
flatmate, a partner, an elderly dad and a kelpie, and who corrects herself (English); a Taiwanese-American software
PM in Seattle who writes mostly in Chinese with English product words and asks in both languages (Chinese/English);
a Kyoto graduate student who moves to Tokyo for her first job and is asked about it partly in English (Japanese).
Each life: (days after the bench's START, what the user said[, the assistant's reply]); its questions: (question,
words the answering memory must contain ("a|b": either), language)."""

from __future__ import annotations

# Hannah Whitfield, 31, RN in Melbourne: ortho ward -> ICU -> Austin ICU; flatmates Jess then Marco; partner Tom
# (electrician); dad Graham in Ballarat (falls, Parkinson's, aged care); kelpie Biscuit; self-corrections.
LIFE_THIRTYSIXTH = [
    (0, "Hi there, I'm Hannah, 31, registered nurse at the Royal Melbourne Hospital. I'm on the orthopaedic ward, "
        "Ward 7 East, doing 12-hour rotating shifts. Can you give me some meal prep ideas that survive a night "
        "shift in a locker with no fridge?",
     "Sure! Think grain bowls, wraps and bento-style boxes with boiled eggs and roast veg. An insulated bag with "
     "an ice brick makes a big difference."),
    (12, "My flatmate Jess and I keep fighting about the dishes lol. She's doing a PhD in marine biology at "
         "Melbourne Uni so she's home all day and I'm on nights. We split $2,350 a month for the house in "
         "Brunswick. Could you draft a fair chore roster?"),
    (25, "Took Biscuit to the vet today, she's my 3-year-old kelpie cross. She weighed in at 19.4 kg and the vet "
         "wants her closer to 16. Any low-calorie treats that won't make her hate me?"),
    (40, "Tom and I hit two years next week! He's a sparky, runs his own little electrical business out of Coburg. "
         "Where should we go for dinner in the CBD? I'm allergic to shellfish, prawns especially, so no seafood "
         "places please.",
     "Happy anniversary! A few non-seafood ideas: a Sichuan place on Flinders Lane, a trattoria on Lygon St, or "
     "a tasting menu where you warn the kitchen about shellfish ahead of time."),
    (55, "My dad Graham is 79 and lives on his own in Ballarat. He had a fall in the bathroom on Sunday, nothing "
         "broken thank god, but his GP Dr. Nguyen wants a home safety check. What should I look at when I go up?"),
    (68, "Night shift brain: I just found my car keys in the fridge. Next to the milk. Which I can't even drink."),
    (82, "Dad has a cardiology appointment on Tuesday the 14th with Dr. Farrow at Ballarat Base. Actually it's "
         "Thursday the 16th, not Tuesday, I just re-read the letter. Can you help me write a list of questions? "
         "He's been getting breathless on the stairs."),
    (100, "I'm thinking of applying to move to ICU. There's a transition to critical care program that includes a "
          "postgrad certificate through Deakin. Interview is on the 3rd of November. Help me prep answers?"),
    (118, "I got into ICU!! My last shift on ortho is the 26th of January and I start in the Intensive Care Unit "
          "on February 5. Terrified and excited.",
     "Congratulations Hannah! That's a big step. Want a short list of things to revise before your first week?"),
    (135, "Can you suggest a few post-shift breakfast recipes? I'm lactose intolerant so I use oat milk for "
          "everything, and I'm always starving at 8am after nights."),
    (150, "Jess is moving to Townsville for a research job on the reef, so she's out at the end of the month. The "
          "new flatmate is Marco, he's a chef at a pizza place on Sydney Road, so he's on weird hours too. Tips "
          "for setting house rules early?"),
    (168, "Signed up for the Run Melbourne 10k in July! I've been running Sunday mornings around Princes Park with "
          "Biscuit. Can you build me a 10-week plan that fits around my rosters?"),
    (205, "Biscuit weigh-in: 17.2 kg! The carrot sticks are working. The vet nurse gave her a gold star sticker."),
    (250, "Tom's birthday is on the 9th of March, no wait, the 19th, the 9th is his mum's. Gift ideas? He's "
          "obsessed with fishing off the pier at Williamstown and he keeps losing his tackle box."),
    (280, "Dad's been diagnosed with early Parkinson's. The neurologist, Dr. Amelia Hart, started him on Sinemet "
          "three times a day. I'm trying not to go full nurse on him. What should I watch for as his daughter?",
     "Watch for changes in his walking, falls, mood and sleep, and how his doses line up with meals. It's okay "
     "to just be his daughter on the visits."),
    (310, "Booked Tassie with Tom for 10 to 17 April! Flying into Hobart, then a few nights at Freycinet. What "
          "should we not miss? Tom wants to fish, I want cheese (lactose-free-ish lol)."),
    (340, "Three code blues in one shift. Home now, eating toast on the kitchen floor with the dog."),
    (370, "I've gone down to 0.8 FTE, so four shifts a week, and I've kept every Wednesday off to drive up and take "
          "Dad to his appointments. Help me plan a routine for those days?"),
    (400, "Big news: Tom and I are moving in together! We found a two-bedroom in Coburg, $640 a week, moving on "
          "the 1st of May. Marco's keeping the Brunswick house and finding someone else. Biscuit is coming with "
          "us obviously. Packing checklist?"),
    (430, "The new EBA kicked in and my base rate is now $49.30 an hour, plus night penalties. Finally!"),
    (470, "Dad's moving into aged care. It's Wattle Grove in Ballarat, his room looks over the garden. Move-in is "
          "the 2nd of June, hang on, no, the 12th of June, the 2nd was the assessment. How do I make his room "
          "feel like home?"),
    (550, "Changing wards again, sort of. I got a Clinical Nurse Specialist job in the ICU at the Austin Hospital, "
          "starting in November. Ten minutes from home instead of forty. Can you help me write my resignation "
          "email to my nurse unit manager?"),
    (590, "Biscuit tore her cruciate chasing a possum. Dr. Kaur at Coburg Vet Clinic says she needs surgery, "
          "$4,800 all up, and pet insurance covers 80%. Recovery tips for a dog who refuses to sit still?"),
    (630, "TOM PROPOSED. On the pier at Williamstown, of course. We're thinking a small wedding in Daylesford next "
          "autumn, about 60 people.",
     "Congratulations to you both! Autumn in Daylesford is gorgeous. Want a rough planning timeline?"),
    (665, "Dad turned 81 on Saturday. The staff at his place threw a little party and he had two slices of lemon "
          "drizzle cake, always his favourite. He called Tom 'young fella' all afternoon."),
    (695, "Booked the venue, Lake House in Daylesford, for Saturday the 28th of March, sorry, Saturday the 21st, "
          "the 28th was already taken. Can you help me draft save-the-dates?"),
]

QUESTIONS_THIRTYSIXTH = [
    ("Which ward was I working on when I first started at the Royal Melbourne?", ["7 East"], "en"),
    ("What's Jess doing her doctorate in?", ["marine biology"], "en"),
    ("What breed is my dog?", ["kelpie"], "en"),
    ("How heavy was Biscuit at that first vet check?", ["19.4"], "en"),
    ("What did Biscuit weigh at her most recent weigh-in?", ["17.2"], "en"),
    ("What kind of food am I allergic to?", ["shellfish|prawns"], "en"),
    ("What does Tom do for work?", ["sparky|electrical"], "en"),
    ("Who's my dad's family doctor?", ["Nguyen"], "en"),
    ("Which day was Dad's heart appointment in the end?", ["Thursday"], "en"),
    ("What date did I begin in intensive care?", ["February 5"], "en"),
    ("What do I put in my coffee and cereal instead of regular milk?", ["oat milk"], "en"),
    ("Who took over Jess's room when she left?", ["Marco"], "en"),
    ("When is Tom's birthday?", ["19th"], "en"),
    ("What Parkinson's medication is Dad taking?", ["Sinemet"], "en"),
    ("When were we in Tasmania?", ["10 to 17 April"], "en"),
    ("Which day of the week have I kept free to look after Dad?", ["Wednesday"], "en"),
    ("How much rent do Tom and I pay?", ["640"], "en"),
    ("What's my hourly pay now?", ["49.30"], "en"),
    ("What's the name of the aged care home Dad lives in?", ["Wattle Grove"], "en"),
    ("What day did Dad actually move into care?", ["12th of June"], "en"),
    ("Which hospital am I working at these days?", ["Austin"], "en"),
    ("How much did the dog's knee operation cost?", ["4,800"], "en"),
    ("What cake does Dad love?", ["lemon drizzle"], "en"),
    ("What date is our wedding?", ["21st"], "en"),
]

# Lin Jiaying (Jenny), 33, Taiwanese-American PM in Seattle: Microsoft Teams -> Head of Product at a startup;
# boyfriend -> fiance Chen Boyu (Brian); orange cat Mochi (麻糬); brother in Taipei; mom in Taichung.
LIFE_THIRTYSEVENTH = [
    (0, "嗨，我是林佳穎，英文名 Jenny，33歲，台灣長大、高中搬來美國。現在在 Microsoft 當 Senior PM，"
        "負責 Teams 的 meeting recording，住在 Seattle 的 Capitol Hill。下週 quarterly planning 要報 roadmap，"
        "幫我整理一下怎麼講比較有重點？",
     "可以！建議分三段：上季成果（用數字講）、這季的 top 3 priorities、需要其他團隊支援的 dependencies，"
     "每段不要超過兩張 slide。"),
    (15, "男朋友陳柏宇（Brian）在 UW 做 postdoc，研究 protein design，我們在一起三年了。他7月8號生日，"
         "想找一間 Fremont 或 Ballard 的餐廳慶祝。對了我對奇異果過敏，甜點如果有放要避開。"),
    (30, "我家貓麻糬是橘貓，兩歲，今天帶去看獸醫量了4.1公斤，醫生說不能再胖了。有什麼讓貓多動一點的方法？"),
    (45, "今天 standup 開了四十分鐘 😩 到底誰家的 standup 是這樣開的"),
    (60, "我媽要從台中來西雅圖住一個月，10月3號到。她膝蓋不好，走不了太多路，有什麼不用爬坡的景點？",
     "可以去 Pike Place Market 慢慢逛、搭渡輪去 Bainbridge Island，或是 Chihuly Garden and Glass，路都比較平。"),
    (80, "我每週二、週四要進 Redmond 的辦公室，520 橋上每次都塞四十分鐘。推薦幾個適合通勤聽的 podcast，"
         "中英文都可以。"),
    (100, "这个季度我负责的 OKR 是让 recording 的 weekly active users 涨15%。帮我想几个可以跑的 A/B test？"),
    (120, "我哥林冠廷在台北當建築師，他要結婚了！婚禮是明年1月18號在台北。我要幫全家訂機票，"
          "SEA 飛 TPE 什麼時候買比較便宜？"),
    (140, "Performance review 結果出來了，拿到 Exceeds，但是沒升 Principal。我主管 Priya 說明年再幫我推，"
          "好難過又好不甘心。"),
    (200, "有個 recruiter 找我，South Lake Union 的 healthtech startup 叫 Lumen Health，要找 Head of Product。"
          "第一輪 offer 是 base 195k 加 0.4% equity。我該怎麼 negotiate？",
     "先表達很有興趣，再用市場數據和你現在的 total comp 去談；base 跟 equity 可以分開談，也可以問 refresh 和 "
     "vesting schedule。"),
    (215, "談下來了！base 210k、equity 0.5%，3月11號開始上班。今天跟主管提離職了，她人很好，還說會幫我寫推薦信。"),
    (240, "新公司基本上 remote，只有每週三要去 South Lake Union 的辦公室開 team day。終於不用再過 520 了！"),
    (260, "最近睡不好，常常半夜三點醒來就想看 Slack。家庭醫生 Dr. Okada 說可能是焦慮，建議我先試 CBT-I，"
          "我也不想吃安眠藥。有推薦的 app 嗎？"),
    (290, "麻糬又胖了，5.3公斤😭 獸醫叫我換成 Hill's 的體重控制飼料，而且一天只能餵兩次。"),
    (320, "柏宇找到工作了！離開學校，去 Fred Hutch 當 staff scientist，下個月開始。他說終於有正常薪水了哈哈"),
    (350, "柏宇跟我求婚了！！！在 Kerry Park 看夜景的時候，我哭到妝全花。我們想回台中辦婚禮。",
     "恭喜你們！！那裡的夜景真的超適合求婚。要不要先列一下回台中辦婚禮要處理的事情？"),
    (380, "我們開始看房子了，預算大概 90 萬美金，想在 Bellevue 或 Redmond，最好有小院子讓麻糬曬太陽。"
          "現在 mortgage rate 6.1%，要先 lock 嗎？"),
    (420, "買到了！！Redmond 的 Education Hill 一間 townhouse，成交價 935,000，6月15號交屋。現在 Capitol Hill "
          "的租約剛好到6月底。"),
    (450, "要幫新團隊 order boba，我自己固定喝烏龍鮮奶半糖少冰。幫我做一個 Google Form 讓大家填飲料？"),
    (480, "最近每週六早上8點到10點跟同事在 Marymoor Park 打 pickleball，手臂練得好壯。"),
    (510, "我們的 AI scribe 產品 CareNote 確定9月9號 launch！幫我 review 一下 launch checklist，"
          "尤其是 HIPAA 相關的部分。"),
    (540, "我媽要在台中榮總換人工膝關節，手術排在11月20號。我打算請兩週假回去照顧她，有什麼需要準備的？"),
    (580, "B 輪募資完成，我的 base 調到 225k 了！晚上跟柏宇去 Canlis 吃飯慶祝。"),
    (620, "院子裡自己種的小番茄第一次收成了，雖然只有七顆哈哈"),
    (660, "婚禮日期定了，10月12號在台中林酒店，預計28桌。幫我列一個從現在開始的準備時間表？"),
    (695, "写 PRD 的时候老板 Daniel 说我的 success metrics 太多了，只能留三个。帮我挑：activation rate、"
          "weekly notes per clinician、NPS、time saved per visit。"),
]

QUESTIONS_THIRTYSEVENTH = [
    ("What fruit am I allergic to?", ["奇異果"], "en"),
    ("What does my brother do for a living?", ["建築師"], "en"),
    ("When is my brother's wedding?", ["1月18"], "en"),
    ("What base pay did the startup first offer me?", ["195k"], "en"),
    ("What date did I start at Lumen?", ["3月11"], "en"),
    ("Who's my family doctor?", ["Okada"], "en"),
    ("How much does Mochi weigh now?", ["5.3"], "en"),
    ("Which hospital is my mom having her knee surgery at?", ["台中榮總"], "en"),
    ("What's my usual bubble tea order?", ["半糖少冰"], "en"),
    ("How much was I supposed to grow recording usage that quarter?", ["15%"], "en"),
    ("What neighborhood is our house in?", ["Education Hill"], "en"),
    ("When is our wedding?", ["10月12"], "en"),
    ("我男朋友原本是做什麼工作的？", ["postdoc"], "zh"),
    ("柏宇現在在哪裡上班？", ["Fred Hutch"], "zh"),
    ("他是在哪裡跟我求婚的？", ["Kerry Park"], "zh"),
    ("我媽那次是哪天飛到西雅圖的？", ["10月3"], "zh"),
    ("以前在微軟的主管叫什麼名字？", ["Priya"], "zh"),
    ("在微軟的時候我一週哪幾天要進公司？", ["週二"], "zh"),
    ("我现在每周哪天要去办公室？", ["週三"], "zh"),
    ("我們房子最後是用多少錢買的？", ["935,000"], "zh"),
    ("我现在的底薪是多少？", ["225k"], "zh"),
    ("我們那個 AI 產品哪天上線？", ["9月9"], "zh"),
    ("週末打 pickleball 的公園叫什麼？", ["Marymoor"], "zh"),
    ("我在新公司的老闆是誰？", ["Daniel"], "zh"),
]

# Nakamura Akari, 24, NLP master's student at Kyoto University -> search engineer at a Tokyo AI startup; hamster
# Daifuku; boyfriend Yuma (breakup); sister Miyu; casual and polite Japanese.
LIFE_THIRTYEIGHTH = [
    (0, "はじめまして、中村あかりと申します。京都大学大学院の情報学研究科、修士2年で、自然言語処理の研究をしています。"
        "来週の研究室のゼミで中間発表があるので、スライド構成の相談に乗っていただけますか？",
     "はじめまして！背景・目的・手法・現時点の結果・今後の予定の5部構成がおすすめです。結果の図は1枚に絞ると"
     "伝わりやすいですよ。"),
    (12, "出町柳の近くで一人暮らししてる。鴨川まで歩いて3分なのが最高。朝ランしたいけど続く気がしない笑"),
    (25, "バイトは四条のカフェ「月と珈琲」で週3、時給1100円。常連さんの名前が全然覚えられないんだけど、コツある？"),
    (40, "指導教員の鈴木先生に修論の章立てを出したら、赤ペンで真っ赤になって返ってきました…。厳しいけど優しい先生"
         "です。修正の優先順位のつけ方を教えてください。"),
    (55, "ハムスター飼い始めた！ゴールデンハムスターの「だいふく」、オス、120グラム。ケージのレイアウトどうしたらいい？"),
    (70, "彼氏の悠真は同じ大学の工学部で博士課程。大阪出身でツッコミが鋭い笑 今度の土曜に嵐山行くんだけど、"
         "人混みを避けられる時間帯ってある？",
     "朝8時前の竹林がおすすめ！昼前からは一気に混むので、早めに行ってお昼は少し離れたお店にすると楽だよ。"),
    (85, "今日の京都、37度…完全に溶けた。"),
    (100, "研究室の打ち上げのお店を探しています。私は卵アレルギーがあるので、卵を使わないコースに対応してくれる"
          "お店がいいです。烏丸あたりで10人くらい入れるところの探し方を教えてください。"),
    (120, "東京のAIスタートアップ「ソラリス」のサマーインターン受かった！8月19日から2週間、渋谷のオフィスに通う。"
          "マンスリーマンションってどこで探せばいい？"),
    (150, "インターンが終わりました。検索ランキングのチームで、メンターの高橋さんがすごく丁寧に教えてくださいました。"
          "お礼のメールの文面を一緒に考えていただけますか？"),
    (185, "内定2つ出た！ソラリスは初任給28万、もう一個の富士通は26万。勤務地はどっちも東京。どうやって決めたらいい？",
     "お金だけでなく、配属の決まり方、研修制度、成長できそうな環境、住みたい街からの通いやすさも比べてみよう。"),
    (200, "ソラリスに決めました。来年4月入社で、配属はインターンのときと同じ検索チームの予定です。"),
    (230, "妹のみゆが受験で京都に来る。2月25日が同志社の試験で、前の日からうちに泊まる予定。受験前日のごはん、"
          "何がいいかな？"),
    (280, "修論、1月30日に提出しました！！タイトルは「低資源言語における検索拡張生成の評価」。もう何も考えたくない…"),
    (300, "みゆ、第一志望の文学部受かった！4月から京都で一人暮らし。入れ違いで私は東京だけど笑"),
    (315, "最近花粉症がひどくて、近所の田村耳鼻科でアレグラを出してもらいました。スギが一番ダメみたいです。"),
    (340, "東京の部屋決まった！三軒茶屋の1K、家賃9万2千円。3月28日に引っ越し。だいふくって新幹線でどうやって連れて"
          "いけばいいですか？"),
    (370, "入社式終わった〜。スーツ久しぶりすぎて肩こった。"),
    (400, "悠真と遠距離になって3ヶ月。月1で会うって決めてたけど、新幹線代が往復2万8千円くらいかかって地味につらい。"
          "安く行く方法ある？"),
    (440, "働き方の相談です。最初はリモート週2だったのですが、10月から週4出社になりました。通勤は田園都市線で渋谷"
          "まで。満員電車で疲れない工夫はありますか？"),
    (480, "悠真と別れた。お互い忙しすぎて、ちゃんと話し合って決めた。しばらく仕事に集中する。",
     "話し合って決められたのは、二人とも誠実だった証拠だと思う。無理せず、自分のペースでね。"),
    (520, "最近ボルダリング始めた！二子玉川のジム「ベースキャンプ」に毎週木曜の仕事帰りに行ってる。まだ5級しか"
          "登れない"),
    (560, "だいふくの健康診断、体重150グラムでちょっと太りぎみって言われた。ひまわりの種あげすぎかも…"),
    (600, "入社2年目で昇給して、月給30万になりました。ふるさと納税を始めたいのですが、仕組みを教えていただけますか？"),
    (640, "妹のみゆが夏休みに東京来る！8月10日から3泊。あの子辛いもの苦手だから、辛くないおいしいお店教えて。"
          "私の抹茶スイーツ巡りにも付き合わせる予定笑"),
    (680, "上司の高橋さんが異動になって、来月から私がチームのサブリーダーです。後輩2人を見ることになりました。"
          "1on1はどう進めればいいでしょうか？"),
]

QUESTIONS_THIRTYEIGHTH = [
    ("What field was I researching in grad school?", ["自然言語処理"], "en"),
    ("Which part of Kyoto did I live in?", ["出町柳"], "en"),
    ("What am I allergic to?", ["卵アレルギー"], "en"),
    ("What's my hamster's name?", ["だいふく"], "en"),
    ("What starting salary did Solaris offer me?", ["28万"], "en"),
    ("When did I submit my master's thesis?", ["1月30"], "en"),
    ("How much is my rent in Tokyo?", ["9万2千"], "en"),
    ("What day of the week do I go climbing?", ["木曜"], "en"),
    ("学生のとき働いてたカフェの名前なんだっけ？", ["月と珈琲"], "ja"),
    ("バイトの時給っていくらだった？", ["1100円"], "ja"),
    ("修士のときの指導教員はどなたでしたか？", ["鈴木"], "ja"),
    ("悠真ってどこの出身だっけ？", ["大阪"], "ja"),
    ("インターンでお世話になったメンターは誰でしたか？", ["高橋"], "ja"),
    ("断ったほうの内定、初任給いくらだった？", ["26万"], "ja"),
    ("みゆが合格したのって何学部？", ["文学部"], "ja"),
    ("花粉症でもらった薬の名前を教えてください。", ["アレグラ"], "ja"),
    ("今、東京のどこに住んでるんだっけ？", ["三軒茶屋"], "ja"),
    ("今は週に何日会社に行っていますか？", ["週4"], "ja"),
    ("遠距離だったころ、京都までの往復っていくらかかってた？", ["2万8千"], "ja"),
    ("現在のお給料はいくらですか？", ["30万"], "ja"),
    ("だいふくって今何グラムだっけ？", ["150"], "ja"),
    ("ボルダリングしに行ってるのってどこ？", ["二子玉川"], "ja"),
    ("みゆが東京に遊びに来るのはいつからでしたっけ？", ["8月10"], "ja"),
]
