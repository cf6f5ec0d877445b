"""Blind everyday lives (C), written without reading the system's code: a single-mom bus driver turned dispatcher in
Ohio (English); a cardiology resident in Chengdu who moves to Shanghai (Chinese with English code-switching); an Osaka
salaryman with a hobby band and a mother in care (Japanese).
Each life: (days after the bench's START, what the user said[, the assistant's reply]); its questions: (question,
words the answering memory must contain ("a|b": either), language)."""

from __future__ import annotations

# Dani Brooks, 34, single mom of Marcus and Ava in Columbus OH; bus driver -> dispatcher, new partner Gabe, moves.
LIFE_THIRTYTHIRD = [
    (0, "Hi! I'm Dani Brooks, 34, single mom of two. Marcus is 9 and Ava just turned 6. I drive the number 22 bus "
        "for COTA here in Columbus, mostly split shifts, so mornings are chaos. Can you help me make a weekday "
        "morning checklist the kids can mostly follow on their own?",
     "Of course! Here's a simple picture-friendly checklist: get dressed, breakfast, brush teeth, shoes on, "
     "backpack by the door. Want a printable version?"),
    (25, "Need nut-free lunchbox ideas. Marcus is allergic to tree nuts, cashews are the worst, he broke out in hives "
         "at a birthday party last spring. Sunflower butter is fine for him."),
    (40, "Ugh, my ex Troy skipped his weekend AGAIN. He's supposed to have the kids every other Saturday 10 to 6. "
         "Can you help me write a calm text that documents it without starting a fight?",
     "Here's a neutral version: 'Hi Troy, noting that you didn't pick up the kids today for your scheduled "
     "Saturday. Please let me know by Wednesday if you're planning on next time.'"),
    (90, "Marcus started fourth grade at Barrett Elementary and his teacher Mrs. Okafor says he's reading below "
         "grade level. She suggested the after-school reading club Tuesdays and Thursdays until 4:15. Will that "
         "make him hate reading?",
     "Not necessarily. Small-group clubs are often more relaxed than class. Ask if he can pick his own books."),
    (110, "My mom Linda retired from the post office last month and offered to pick the kids up on my late days, "
          "Monday, Wednesday and Friday. She refuses money. What's a nice way to thank her anyway?"),
    (130, "Okay so... I met someone. His name is Gabe, he's a mechanic at a tire shop on Route 23, divorced, with a "
          "13-year-old daughter named Rosie. Three dates so far. When is it ok to tell my kids?",
     "There's no fixed rule, but a lot of parents wait until things feel stable, often a few months in."),
    (150, "Threw my back out lifting Ava's booster seat. Doctor says lumbar strain, physical therapy twice a week at "
          "the OhioHealth clinic on Stringtown Rd for six weeks. Any stretches I can do in the driver's seat on "
          "layovers?"),
    (170, "Taco night for four on Friday, Gabe's coming over! No cilantro please, it tastes like soap to me and "
          "Marcus hates it too. And obviously no nuts. Recipe?"),
    (190, "Ava lost her first tooth at breakfast and then lost the actual tooth somewhere in the couch. The tooth "
          "fairy is going to have to leave an IOU lol."),
    (205, "BIG NEWS. I got the dispatcher job!! Starting March 4 I'm off the bus and in the control center, 6am to "
          "2:30pm Monday to Friday. No more split shifts, and it's $24.10 an hour.",
     "Congratulations, Dani! A steady daytime schedule is huge with two kids."),
    (225, "With my new hours I can do pickup myself, though mom still wants the kids on Fridays. Ava does gymnastics "
          "at Flip Zone on Wednesdays 5-6, and Marcus joined a Saturday morning flag football league. Help me lay "
          "out our week?"),
    (250, "We adopted a cat from the shelter! Orange tabby, about 2 years old, the kids named him Pickles. Ava's "
          "doctor said it should be ok if he stays out of her bedroom. What supplies do I need?"),
    (275, "We're moving! Found a 3-bedroom rental in Grove City with a fenced yard, $1,395 a month, closer to Gabe "
          "and to my mom. Move-in is July 1 and the kids switch schools in the fall. Moving checklist?",
     "Here's a six-week plan: give notice, book a truck, notify the school district, forward mail, then pack "
     "room by room starting with what you use least."),
    (300, "Planning our first trip with Gabe and his daughter: Gatlinburg, June 14 to 18, in a cabin in Pigeon "
          "Forge. Five of us, the kids are 7, 10 and 14. Cheap things to do?"),
    (360, "New school year. Marcus is in fifth grade at Park Street Intermediate and Ava's in second grade at "
          "Buckeye Woods Elementary. His new teacher Mr. Delgado sends like three emails a day. How do I keep up?"),
    (390, "Thursday bowling league at Sawmill Lanes with the girls from the depot, and I bowled a 168 tonight, my "
          "best game ever!!"),
    (420, "Troy took a job in Dayton, so custody is changing: he'll get the kids one full weekend a month plus two "
          "weeks in the summer. Can you help me set that up in a shared calendar?"),
    (480, "Good news on Ava: her pulmonologist Dr. Haddad put her on a daily Flovent inhaler and she's barely "
          "needed the rescue one since. First winter without an ER visit!"),
    (510, "Emergency fund is at $2,300! Next target: the $4,200 left on my Honda Odyssey loan at the credit union. "
          "Snowball or avalanche?"),
    (540, "Marcus wants to try out for a travel baseball team, the Southwest Hornets. Tryouts are Feb 8 and it's "
          "$650 a season, ouch. Fundraising ideas that aren't selling candy bars?"),
    (565, "Annual review went great, I'm bumped to $25.35 an hour, and they're sending me to supervisor training "
          "in Cincinnati in April."),
    (600, "Gabe and I are officially moving in together June 1! He's bringing Diesel, his 70-pound pit mix, and "
          "our cat has never lived with a dog. How do we introduce them slowly?",
     "Start with scent swapping and separate rooms for the first week, then short supervised meetings with "
     "the dog leashed."),
    (640, "Marcus made the team!! He cried, I cried, Gabe pretended he had something in his eye."),
    (685, "Mom turns 65 on October 12 and I want to surprise her with brunch at Der Dutchman in Plain City, about "
          "14 people. Can you help me with a timeline?"),
]

QUESTIONS_THIRTYTHIRD = [
    ("What was the name of the teacher Marcus had in fourth grade?", ["Okafor"], "en"),
    ("Which nut was it that gave my son hives?", ["cashew"], "en"),
    ("Who offered to get the kids from school when I was working late?", ["Linda"], "en"),
    ("What does the guy I'm with do for work?", ["mechanic"], "en"),
    ("What's the name of Gabe's kid?", ["Rosie"], "en"),
    ("Where was the clinic for my back rehab?", ["Stringtown"], "en"),
    ("Which herb should I leave out when I cook for us?", ["cilantro"], "en"),
    ("What's my job these days?", ["dispatcher"], "en"),
    ("How much am I making per hour now?", ["25.35"], "en"),
    ("What's the place called where Ava does her tumbling?", ["Flip Zone"], "en"),
    ("When does Marcus have his flag football?", ["Saturday morning"], "en"),
    ("What did the kids call the orange tabby we got?", ["Pickles"], "en"),
    ("Which town is our rental house in?", ["Grove City"], "en"),
    ("What were the dates for the Smoky Mountains cabin trip?", ["June 14"], "en"),
    ("What school is Ava at now?", ["Buckeye Woods"], "en"),
    ("Where's my bowling league?", ["Sawmill"], "en"),
    ("How often does Troy get the kids now?", ["one full weekend a month"], "en"),
    ("Who's the lung doctor treating Ava?", ["Haddad"], "en"),
    ("What's the everyday inhaler Ava is on?", ["Flovent"], "en"),
    ("Which car loan am I trying to pay down?", ["Odyssey"], "en"),
    ("What's Gabe's dog called?", ["Diesel"], "en"),
    ("When's my mom's birthday again?", ["October 12"], "en"),
]

# Chen Siyuan, 29, cardiology resident at West China Hospital in Chengdu -> Shanghai hospital; mixes in English.
LIFE_THIRTYFOURTH = [
    (0, "你好，我叫陈思远，29岁，在成都华西医院心内科做规培住院医师，第二年了。每周大概要值两个夜班，"
        "能不能帮我规划一下值完夜班第二天怎么调整作息？",
     "可以。夜班后先睡3-4小时补觉，下午尽量晒太阳、别喝咖啡，晚上按平时时间睡，第二天就能基本调回来。"),
    (14, "我男朋友刘洋在深圳做算法工程师，我们异地快两年了，一般一个月见一次。他生日是11月3号，"
         "想送他一个不太贵但是有心意的礼物，有推荐吗？"),
    (30, "Can you help me polish this abstract? 'We retrospectively analyzed 412 patients with heart failure with "
         "preserved ejection fraction (HFpEF) admitted between 2018 and 2022...' I want to submit it to the "
         "Chinese Society of Cardiology annual meeting, deadline is next Friday.",
     "Sure. I'd tighten the first sentence and state the primary endpoint up front; here's a revised version..."),
    (45, "我对芒果过敏，嘴唇会肿。今天食堂甜品里居然有芒果布丁，差点吃了。你帮我列一下常见的含芒果的"
         "零食和饮料吧，我以后注意。"),
    (60, "我家团子（一只三岁的英短蓝猫）最近老吐毛球，我值班的时候是室友帮我喂。化毛膏一般多久喂一次？"),
    (80, "今天抢救回来一个室颤的病人，下班的时候天都亮了。累，但是很开心。"),
    (95, "我爸在绵阳，2型糖尿病十年了，最近空腹血糖老在8点几。他不爱吃药，嫌二甲双胍伤胃。我该怎么劝他？",
     "可以先问问他具体哪里不舒服，缓释剂型或者随餐服用对胃的刺激会小很多，也可以让他的医生调整方案。"),
    (115, "周六早上我一般跟科室同事去打羽毛球，8点到10点，在川大望江校区体育馆。最近右肩有点疼，"
          "是不是动作不对？"),
    (135, "Quick question in English since I'm writing my case report: how do reviewers expect 'syncope' vs "
          "'presyncope' to be described? My attending wants it submitted to JACC: Case Reports."),
    (160, "执业医师考试笔试定在8月24号，我打算每天晚上刷两个小时题，用的是昭昭医考的题库。"
          "能帮我做个倒计时复习计划吗？"),
    (230, "好消息！执业医师考试过了，笔试482分！",
     "恭喜！这个分数很稳，辛苦这么久值得好好庆祝一下。"),
    (260, "我在纠结规培结束以后去哪：一个是留在成都读博，一个是去上海一家三甲医院做心血管方向的临床博士后。"
          "刘洋说他也可以考虑从深圳调过去。帮我列个利弊？"),
    (300, "决定了，去上海瑞金医院！明年7月入职。刘洋他们公司在上海也有办公室，他已经申请内部转岗了。"),
    (330, "过年回老家，我妈让我顺便带我爸去复查，糖化血红蛋白7.9。春节饭局多，有什么控糖小技巧能让他照做的？"),
    (370, "Do you know good resources for learning R for survival analysis? My future PI wants me to redo all "
          "the Kaplan-Meier curves before I even start."),
    (400, "尤克里里学了三个月了，现在能弹《晴天》的前奏了！每周四晚上上网课，手指终于不那么疼了。"),
    (470, "在上海租好房子了，徐汇区宛平南路附近，一室户，月租6800，离医院骑车15分钟。团子也托运过来了，"
          "它适应得比我还快。"),
    (500, "到上海以后羽毛球也没断，现在每周三晚上7点跟医院几个球友在徐家汇体育公园打，肩膀也好多了。"),
    (530, "Landed in London for the ESC Congress. My poster session is Saturday, board P-217. So nervous. Any "
          "tips for a 3-minute pitch?",
     "Lead with the one finding you want people to remember, then method in one sentence, then why it matters."),
    (560, "刘洋向我求婚了！！在外滩，他紧张得戒指差点掉了。我们打算明年五一回我老家办婚礼。"),
    (600, "上海的冬天湿冷得离谱，比成都还难受，手都冻裂了。"),
    (630, "最近在戒奶茶，以前一周要喝四五杯，现在改喝无糖豆浆，已经坚持两周了。"),
    (660, "My boss Prof. Zhang approved my grant topic: using wearable ECG patches to detect atrial fibrillation "
          "after cardiac surgery. The application is due March 15. Can you help outline the significance "
          "section?"),
    (690, "团子今天体检，医生说有点超重，6.2公斤，要换成体重管理的猫粮了。"),
]

QUESTIONS_THIRTYFOURTH = [
    ("Which hospital did I do my residency training at in Chengdu?", ["华西"], "en"),
    ("What does my boyfriend do for a living?", ["算法工程师"], "en"),
    ("刘洋生日是几月几号来着？", ["11月3"], "zh"),
    ("How many patients were in my HFpEF abstract?", ["412"], "en"),
    ("我对哪种水果过敏来着？", ["芒果"], "zh"),
    ("What breed is my cat?", ["英短"], "en"),
    ("我爸嫌伤胃不肯吃的那个降糖药叫什么？", ["二甲双胍"], "zh"),
    ("What city are my parents in?", ["绵阳"], "en"),
    ("Which journal was my syncope case report going to?", ["JACC"], "en"),
    ("执业医师笔试是哪天考？", ["8月24"], "zh"),
    ("What did I score on the medical licensing exam?", ["482"], "en"),
    ("我在上海是去哪家医院工作？", ["瑞金"], "zh"),
    ("尤克里里我现在会弹哪首歌了？", ["晴天"], "zh"),
    ("What street do I live near in Shanghai?", ["宛平南路"], "en"),
    ("我现在一般什么时候打羽毛球？", ["周三晚上"], "zh"),
    ("What was my poster board number in London?", ["P-217"], "en"),
    ("我们婚礼打算什么时候办？", ["五一"], "zh"),
    ("What am I drinking instead of milk tea these days?", ["豆浆"], "en"),
    ("我老板叫什么名字？", ["Zhang"], "zh"),
    ("基金申请什么时候截止？", ["March 15"], "zh"),
    ("How heavy is Tuanzi now?", ["6.2"], "en"),
]

# Sato Kenta, 41, food-company salesman in Osaka -> product planning; bassist in a hobby band; mother in care.
LIFE_THIRTYFIFTH = [
    (0, "はじめまして。佐藤健太、41歳です。大阪の食品メーカーで営業やってます。最近物忘れが増えてきた母のことで"
        "ちょっと相談したくて…母は和歌山で一人暮らし、72歳です。",
     "はじめまして。まずはかかりつけ医に相談して、地域包括支援センターに連絡してみるのがおすすめです。"),
    (15, "趣味でバンドやってて、ベース担当。バンド名は「ナイトパレード」で、メンバーは高校の同級生4人。"
         "隔週の日曜に心斎橋のスタジオで3時間練習してる。最近指が硬くなってきたんだけど、いいストレッチある？"),
    (30, "嫁の美紀と娘の陽菜（小1）と3人暮らし。あと柴犬のこむぎ。陽菜が最近ピアノ習いたいって言い出したんだけど、"
         "月謝の相場ってどれくらい？"),
    (45, "そばアレルギーあるから、出張先で昼飯選ぶのが地味に大変。来週長野出張なんだけど、名物で他に何かある？",
     "おやき、ソースかつ丼、信州サーモンあたりが安心です。店では必ずアレルギーを伝えてくださいね。"),
    (60, "健康診断で尿酸値8.2って言われた…ビール好きなのにつらい。何から気をつければいい？"),
    (80, "今日取引先で盛大に名刺忘れた。営業15年目で初めてやらかした笑"),
    (100, "母が要介護1に認定された。ケアマネさんは山本さんって人で、週2回デイサービスに通うことになった。",
     "一歩前進ですね。ケアマネさんとは連絡を取りやすい方法を最初に決めておくと楽ですよ。"),
    (120, "セロリだけはどうしても無理。美紀がスープによく入れてくるんだけど、代わりに何入れたらいいか提案してあげて"),
    (140, "ナイトパレード初ライブ決定！3月16日、梅田のライブハウス「クラブ月光」で対バン。持ち時間25分で5曲。"
          "セトリ考えるの手伝って"),
    (200, "4月から商品企画部に異動になった。営業じゃなくなるの、正直ちょっと寂しい。冷凍食品の新商品担当。"
          "企画書の書き方のコツ教えて"),
    (230, "陽菜のピアノ、毎週土曜の10時から近所の教室で始まった。先生が優しくて本人ノリノリ。"),
    (260, "母の認知症が進んで、一人暮らしが難しくなってきた。ケアマネさんと相談してグループホームを探し始めた。"
          "費用は月15万くらいが上限かな。",
     "見学は複数回、できれば食事の時間帯に行くと雰囲気がよく分かります。"),
    (300, "母、実家近くのグループホーム「ひだまり」に入居決まった。11月1日から。毎月第2日曜に面会に行くつもり。"),
    (330, "痛風の発作出た…右足の親指が激痛。医者にフェブキソスタット出された。ビールやめてハイボールにする"),
    (360, "正月休みに家族で沖縄行く予定。12月29日から1月2日まで、恩納村のホテル。こむぎはペットホテルに預ける。"
          "子連れのおすすめスポットある？"),
    (400, "沖縄けっこう寒かったけど、美ら海水族館で陽菜が大興奮してた。ジンベエザメずっと見てたわ"),
    (430, "新しいベース買った！フェンダーのジャズベース、中古で12万。嫁には8万って言ってある（内緒で）"),
    (470, "企画した冷凍餃子「羽根つきパリッと餃子」が9月発売決定！初めての担当商品、めっちゃ嬉しい。"),
    (500, "バンドのドラムの大輔が転勤で福岡行っちゃう。代わりのドラマー探さないと。メンバー募集の文面考えて",
     "「大阪で活動中の社会人バンド、ドラム募集！ロック中心、練習は隔週日曜…」みたいな感じはどうでしょう。"),
    (540, "陽菜、ピアノ発表会で「エリーゼのために」弾くことになった。本番は12月7日。今から俺が緊張してる"),
    (570, "最近は平日ノンアルビールだけにしてる。この前の検査で尿酸値6.4まで下がった！"),
    (610, "母の面会行ったら、俺のこと「健ちゃん」って昔の呼び方で呼んでくれた。ちょっと泣いた。"),
    (650, "新しいドラマーの翔太くんが入ってから、今は毎週水曜の夜にスタジオ入ってる。場所は前と同じ。"),
    (690, "課長に昇進した！部下が5人つく。人を育てるの苦手なんだけど、最初の1on1で何話せばいい？"),
]

QUESTIONS_THIRTYFIFTH = [
    ("母が一人暮らししてたのってどこだっけ？", ["和歌山"], "ja"),
    ("バンドの練習スタジオってどのへんだっけ？", ["心斎橋"], "ja"),
    ("うちの犬って何犬だっけ？", ["柴犬"], "ja"),
    ("俺って何のアレルギー持ってたっけ？", ["そばアレルギー"], "ja"),
    ("健康診断で最初に引っかかった時の尿酸値っていくつだった？", ["8.2"], "ja"),
    ("母の担当のケアマネさん、名前なんだったっけ？", ["山本"], "ja"),
    ("俺がどうしても食べられない野菜って何？", ["セロリ"], "ja"),
    ("初ライブやったハコの名前なんだっけ？", ["月光"], "ja"),
    ("今いる部署ってどこだっけ？", ["商品企画"], "ja"),
    ("陽菜のピアノのレッスンって何曜日？", ["土曜"], "ja"),
    ("グループホーム探した時、月いくらまでって決めてた？", ["15万"], "ja"),
    ("母が入ってる施設の名前は？", ["ひだまり"], "ja"),
    ("痛風で処方された薬、なんて名前だった？", ["フェブキソスタット"], "ja"),
    ("沖縄旅行って何日出発だったっけ？", ["12月29"], "ja"),
    ("新しく買ったベース、本当はいくらしたんだっけ？", ["12万"], "ja"),
    ("初めて担当した商品の名前なんだっけ？", ["羽根つき"], "ja"),
    ("前のドラムの大輔ってどこに転勤したんだっけ？", ["福岡"], "ja"),
    ("陽菜が発表会で弾く曲なんだっけ？", ["エリーゼ"], "ja"),
    ("最近の尿酸値どこまで下がった？", ["6.4"], "ja"),
    ("今バンド練習って何曜日にやってる？", ["水曜"], "ja"),
    ("今の役職なんだっけ？", ["課長"], "ja"),
    ("最近平日は何飲んでる？", ["ノンアル"], "ja"),
]
