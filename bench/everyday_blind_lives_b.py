"""Blind everyday lives (B), written without reading the ranking code: (30) Liu Yang, a Hangzhou interior designer
writing in simplified Chinese; (31) Sato Misaki, an Osaka shop clerk turned Kyoto designer writing in Japanese;
(32) Nina Alvarez, a Portland rower and swim coach who talks a lot about her roommates, boyfriend and teammates.
Each life: (days after the bench's START, what the user said[, the assistant's reply]); its questions: (question,
words the answering memory must contain ("a|b": either), language)."""

from __future__ import annotations

# Liu Yang (刘洋), 36, interior designer in Hangzhou; wife Zhou Min a teacher, daughter Duoduo, corgi Doubao.
LIFE_THIRTIETH = [
    (0, "你好，我叫刘洋，今年36岁，在杭州一家装修设计公司做室内设计师，以后会经常来找你聊聊。",
     "你好刘洋！很高兴认识你，有什么需要随时找我。"),
    (12, "我老婆周敏是小学语文老师，每天起得比我还早，班上四十多个孩子，真不容易。"),
    (25, "帮我推荐几个适合周末做的家常菜吧，注意我不吃香菜，而且我对虾过敏，一吃就起疹子。",
     "好的，可以试试番茄炒蛋、红烧排骨、土豆炖牛肉，都不用香菜，也没有虾。"),
    (40, "我女儿朵朵今年五岁，在小区旁边的向日葵幼儿园上中班，最近特别爱画画。"),
    (58, "家里那只柯基叫豆包，今天又把我的拖鞋咬烂了，气死我了哈哈。"),
    (75, "我每周六早上七点在滨江体育馆打羽毛球，和几个老同事一起，打了快三年了。"),
    (96, "今天天气好闷啊，感觉要下大雨了。", "夏天的杭州确实闷热，出门记得带伞哦。"),
    (120, "体检报告出来了，尿酸偏高，医生让我少喝啤酒少吃内脏，唉，我最爱的烧烤配啤酒要戒了。"),
    (150, "我妈一个人住在绍兴老家，下个月过六十大寿，我想给她订个蛋糕，你觉得什么口味老人会喜欢？",
     "老人一般喜欢口味清淡一点的，可以选水果奶油或者低糖的红豆蛋糕。"),
    (180, "国庆打算带全家去云南大理玩五天，十月二号出发，机票已经订好了。"),
    (220, "大理回来了！洱海真的太美了，朵朵天天嚷着还要去。"),
    (245, "跟你说个事，我从原来的公司辞职了，下周一开始去筑影设计当设计总监，工资涨了不少。"),
    (275, "最近腰疼得厉害，去医院拍了片子，是腰椎间盘突出，医生让我别久坐，每小时起来走走。"),
    (360, "搬完家了！新房在余杭区良渚，过完年终于从滨江搬过来了，离新公司开车二十分钟。"),
    (385, "羽毛球改时间了，搬家以后滨江太远，现在改成每周日晚上八点在良渚文化中心旁边的球馆打。"),
    (410, "豆包最近老是挠耳朵，带去宠物医院看了，说是耳螨，要每天给它滴药水。"),
    (445, "今天五月二十号，是我和周敏结婚十周年，我偷偷订了西湖边的一家餐厅给她个惊喜。",
     "十周年快乐！西湖边吃饭很浪漫，祝你们今晚愉快。"),
    (470, "周敏说她想学开车，暑假报了驾校，七月中旬开始练科目二。"),
    (500, "给我推荐几本适合睡前看的小说吧，最好是悬疑类的，我不太喜欢言情。",
     "可以试试东野圭吾的《白夜行》或者紫金陈的《坏小孩》，节奏都很抓人。"),
    (550, "朵朵上小学了！进的是良渚第二小学，一年级三班，每天早上我送她去。"),
    (575, "哈哈，今天周五，终于可以好好睡个懒觉了。"),
    (620, "公司年底要派我去深圳出差两周，大概十二月八号到二十二号，得提前安排好家里。"),
    (660, "我决定开始跑步减肥了，现在体重82公斤，目标是明年夏天之前减到75公斤。"),
    (700, "周敏升职了，现在是学校的教导主任，不再带班上课了，不过事情反而更多。"),
]

QUESTIONS_THIRTIETH = [
    ("你还记得我今年多大吗？", ["36"], "zh"),
    ("我老婆现在在学校担任什么职务？", ["教导主任"], "zh"),
    ("我吃什么东西会过敏来着？", ["虾"], "zh"),
    ("我家狗狗叫什么来着？", ["豆包"], "zh"),
    ("我现在一般是什么时候去打球？", ["周日", "八点"], "zh"),
    ("上次体检哪项指标不太好？", ["尿酸"], "zh"),
    ("我母亲老家在哪个城市？", ["绍兴"], "zh"),
    ("那次国庆家庭旅行是几号动身的？", ["十月二号"], "zh"),
    ("我跳槽去的新公司叫什么名字？", ["筑影"], "zh"),
    ("拍片子查出来我的腰是什么问题？", ["腰椎间盘突出"], "zh"),
    ("我们的新家在哪一片儿？", ["余杭", "良渚"], "zh"),
    ("我和老婆的结婚纪念日是哪天？", ["五月二十"], "zh"),
    ("狗狗一直挠耳朵，查出来是什么毛病？", ["耳螨"], "zh"),
    ("我老婆学车是几月份开始练的？", ["七月"], "zh"),
    ("我闺女现在在哪所学校念书？", ["第二小学"], "zh"),
    ("年底去深圳那趟出差从哪天开始？", ["十二月八号"], "zh"),
    ("我减肥的目标体重是多少？", ["75"], "zh"),
    ("我说过不爱看哪种类型的小说？", ["言情"], "zh"),
    ("做菜时有什么配料是我不吃的？", ["香菜"], "zh"),
    ("我女儿小名叫什么来着？", ["朵朵"], "zh"),
]

# Sato Misaki (佐藤美咲), 29, apparel clerk in Osaka who becomes a web/UI designer in Kyoto; boyfriend Kenta, cat Mochi.
LIFE_THIRTYFIRST = [
    (0, "はじめまして！佐藤美咲です。29歳で、大阪の梅田にあるアパレルショップで販売の仕事をしてます。よろしくね。",
     "はじめまして、美咲さん！こちらこそよろしくお願いします。"),
    (10, "彼氏の健太は消防士で、24時間勤務のシフトだからなかなか会えないんだよね。"),
    (22, "うちの猫、名前は「もち」っていうんだけど、白くてまんまるだからそう名付けました。"),
    (35, "晩ご飯のレシピ教えてほしいです。ちなみに私、そばアレルギーなので、そば粉を使うものはNGです。",
     "了解です！鶏むね肉の照り焼きや、豚こまと野菜の味噌炒めはいかがでしょう？"),
    (50, "パクチーだけはどうしても無理…あの匂いがダメなんです。逆に激辛ラーメンは大好き。"),
    (70, "毎週水曜の夜7時からホットヨガに通ってます。仕事帰りにちょうどいいんですよ。"),
    (90, "今日めっちゃ雨降ってて、靴がびしょびしょ。最悪〜", "それは大変でしたね。風邪ひかないように温かくしてくださいね。"),
    (110, "妹の彩花は東京の出版社で編集者をしてて、来月大阪に遊びに来てくれます。"),
    (125, "健太の誕生日は8月3日！プレゼント何がいいかな？キャンプが大好きな人なんだけど。",
     "キャンプ好きなら、LEDランタンやチタンのシェラカップはいかがでしょう？"),
    (150, "最近めまいがひどくて病院行ったら、貧血って言われた。鉄剤を毎日飲むことになりました。"),
    (175, "ずっとWebデザインの勉強してたんだけど、ついに転職決まりました！来月から京都のIT会社で働きます。"),
    (190, "京都に引っ越しました。左京区の一乗寺あたりで、ラーメン屋が多くて最高です。"),
    (200, "11月の連休に健太と台湾旅行に行くことにしました！3泊4日で台北と九份を回る予定。"),
    (260, "花粉症の季節が来るのが怖い…毎年2月からスギ花粉で鼻がやばいので、今年は早めに耳鼻科行こうかな。"),
    (290, "ヨガは京都からだと通いにくくなったからやめて、今は毎週土曜の午前中にボルダリングジムに行ってます。"),
    (320, "健太にプロポーズされました！！まだ実感ないけど、めっちゃ嬉しい。"),
    (350, "もちが最近ごはんを残すから動物病院に連れて行ったら、歯肉炎だって。歯みがき頑張らなきゃ。"),
    (380, "母の恵子が還暦なので、家族みんなで有馬温泉に行くことになりました。6月の第2週末です。"),
    (440, "結婚式の日取りが決まりました。来年の4月12日、下鴨神社で挙げます。",
     "おめでとうございます！下鴨神社での式、素敵ですね。"),
    (470, "健太が救急救命士の資格を取って、消防署の中で救急隊に配属されたんだって。本人すごく張り切ってる。"),
    (530, "社内で異動になって、今はWebサイトじゃなくてアプリの画面を作るUIデザイナーとして働いてます。"),
    (570, "今日は何もしないでゴロゴロする日。たまにはいいよね。"),
    (640, "健太と同棲することになって、京都市北区の2LDKに引っ越しました！窓から左大文字が見えるよ。"),
    (690, "猫をもう一匹迎えることにしました！保護猫の黒い子で、名前は「あずき」。",
     "黒猫ちゃん、かわいいですね！先住猫さんと仲良くなれるといいですね。"),
]

QUESTIONS_THIRTYFIRST = [
    ("私って何歳って言ってたっけ？", ["29"], "ja"),
    ("健太って今どの部署で働いてるんだっけ？", ["救急"], "ja"),
    ("うちの白い猫の名前なんだっけ？", ["もち"], "ja"),
    ("私が食べちゃいけないものって何でしたっけ？", ["そば"], "ja"),
    ("私が苦手なハーブって何だったっけ？", ["パクチー"], "ja"),
    ("最近やってる運動って何で、何曜日に行ってるんだっけ？", ["ボルダリング", "土曜"], "ja"),
    ("妹って東京でどんな仕事してるんだっけ？", ["編集者"], "ja"),
    ("健太の生まれた日っていつだった？", ["8月3日"], "ja"),
    ("めまいで病院に行ったとき、何て診断されたんでしたっけ？", ["貧血"], "ja"),
    ("今住んでるのって京都のどの区だっけ？", ["北区"], "ja"),
    ("台湾旅行って何泊の予定だったっけ？", ["3泊4日"], "ja"),
    ("私の花粉症って毎年何月ごろから始まるんだっけ？", ["2月"], "ja"),
    ("式はいつどこでやるんだっけ？", ["4月12日", "下鴨神社"], "ja"),
    ("もちの口の病気、何ていう名前だった？", ["歯肉炎"], "ja"),
    ("お母さんの還暦祝いの旅行先ってどこでしたっけ？", ["有馬温泉"], "ja"),
    ("今の会社での私の職種なんだっけ？", ["UIデザイナー"], "ja"),
    ("新しく来た黒猫の名前は何にしたんだっけ？", ["あずき"], "ja"),
    ("京都に来て最初に住んだのはどのあたりだった？", ["一乗寺"], "ja"),
    ("うちの母の名前、覚えてる？", ["恵子"], "ja"),
    ("健太の趣味って何だったっけ？", ["キャンプ"], "ja"),
]

# Nina Alvarez, 27, competitive rower and swim coach in Portland; boyfriend Sam, roommates Jess and Priya.
LIFE_THIRTYSECOND = [
    (0, "Hey! I'm Nina, 27. I coach age-group swimming at the Southeast Portland YMCA and row competitively on "
        "the side.",
     "Nice to meet you, Nina! Sounds like you spend most of your life in or on the water."),
    (20, "I share a three-bedroom in Sellwood with my roommates Jess and Priya. Can you suggest a dinner I can cook "
         "for the house this weekend? Priya is vegan, so no meat, dairy or eggs.",
     "How about a chickpea and spinach coconut curry with rice? Fully plant-based and easy to scale up."),
    (33, "Jess bakes at Little T Bakery and her shift starts at 4am, so we all tiptoe around at night. She's also "
         "seriously allergic to peanuts, so the whole house is peanut-free."),
    (48, "My boyfriend Sam teaches chemistry at Franklin High. He grades lab reports at our kitchen table every "
         "Sunday."),
    (60, "Coach Rivera just moved our morning crew practices to Tuesdays and Thursdays at 5:30am. Brutal."),
    (75, "Ugh, Mondays. That's all.", "Hang in there, it gets better after the first coffee."),
    (90, "Cut my hand on an oarlock and went to urgent care. They wanted to give me amoxicillin and I had to "
         "remind them I'm allergic to penicillin. Is that related?",
     "Yes, amoxicillin is a penicillin-type antibiotic, so you were right to flag it."),
    (110, "Jess adopted a gray shelter cat and named him Biscuit. Priya is thrilled, I'm sneezing a little."),
    (130, "My teammate Olivia fractured her wrist on the erg yesterday, she's out for at least six weeks."),
    (150, "Sam's sister Lauren is getting married in Sedona on October 14, and we're both invited!"),
    (170, "Sam's birthday is March 14, he always jokes that it's Pi Day. He'd pick Thai food for dinner every time."),
    (190, "Priya just landed a data analyst job at Nike in Beaverton, so she's carpooling with a coworker now."),
    (300, "My mom Carmen is flying up from Tucson for Thanksgiving. She's diabetic, any low-sugar dessert ideas?",
     "Try baked apples with cinnamon and walnuts, or a sugar-free pumpkin mousse."),
    (330, "Big news: I got hired as head swim coach at Lakeridge High School! I start in January and I'm leaving "
          "the Y."),
    (360, "Sam and I are moving in together! We signed a lease on a little house in Beaverton, moving March 1st. "
          "Gonna miss Jess and Priya."),
    (395, "Coach Rivera changed practice again, the boathouse schedule got reshuffled so now it's Monday, Wednesday "
          "and Friday at 6am."),
    (425, "Jess got into a pastry program in Seattle, she's moving up there in May. Biscuit is going with her."),
    (450, "Our women's four got into the Head of the Charles in Boston! Race day is October 19."),
    (480, "My shins have been killing me. The physical therapist says it's shin splints and I should swap stair "
          "runs for more swimming."),
    (540, "Sam switched schools, he's now teaching AP chemistry at Sunset High School. Shorter commute for him."),
    (570, "Priya got engaged to her girlfriend Maya! They're planning a wedding in Portland next June."),
    (600, "We adopted a puppy! She's a border collie mix named Juniper and she has endless energy."),
    (660, "I hate cilantro, can you give me a taco recipe without it? I'm cooking for Sam's parents, Dave and Linda, "
          "on Saturday.",
     "Sure: chipotle chicken tacos with pickled onions, lime crema and shredded cabbage, no cilantro needed."),
    (690, "Lol the dog ate my swim goggles. Again."),
]

QUESTIONS_THIRTYSECOND = [
    ("Which school is my boyfriend teaching at these days?", ["Sunset"], "en"),
    ("What days is crew practice now?", ["Monday", "Wednesday", "Friday"], "en"),
    ("Who does Priya work for?", ["Nike"], "en"),
    ("How early does Jess have to be at the bakery?", ["4am"], "en"),
    ("What food allergy does Jess have?", ["peanut"], "en"),
    ("What's the name of Jess's cat?", ["Biscuit"], "en"),
    ("Which antibiotic am I not allowed to take?", ["penicillin"], "en"),
    ("How did Olivia get hurt, what was the injury?", ["fracture"], "en"),
    ("When is Lauren's wedding?", ["October 14"], "en"),
    ("When is Sam's birthday?", ["March 14"], "en"),
    ("Which city does my mom live in?", ["Tucson"], "en"),
    ("Where am I coaching now?", ["Lakeridge"], "en"),
    ("Where did Sam and I get a place together?", ["Beaverton", "lease"], "en"),
    ("Where is Jess relocating to?", ["Seattle"], "en"),
    ("What date is our race in Boston?", ["October 19"], "en"),
    ("What did the PT say was wrong with my legs?", ["shin splints"], "en"),
    ("Who is Priya marrying?", ["Maya"], "en"),
    ("What's our puppy called?", ["Juniper"], "en"),
    ("Which herb can't I stand?", ["cilantro"], "en"),
    ("What are Sam's parents' names?", ["Dave", "Linda"], "en"),
    ("Does Priya have any dietary restrictions?", ["vegan"], "en"),
]
