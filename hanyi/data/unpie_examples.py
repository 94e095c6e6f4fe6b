"""UNPIE example annotations transcribed from the paper's Figures 6 and 7 (Chung et al., EMNLP 2024).

Facts only (sentences, pun words, glosses, the de/fr/ko translations per meaning); used by the bundled synthetic sample
and the tests. They are figure examples, not verified dataset rows; the field mapping to the hub columns is inferred
(spec §1.7). Fig. 6 Fr meaning-2 of "chemistry" starts with "Les" (the second transcription; the first reads "es").
"""

PAPER_EXAMPLES = (
    {
        "split": "homographic",
        "pun_sentence": "He and his partner made knives, and they shared a cut.",
        "pun_phrase": "cut",
        "alter_phrase": "cut",
        "meaning1": "to divide something with a sharp object",
        "translation1": {
            "de": "Er und sein Partner produzierten Messer und beschäftigten sich mit dem Prozess des Teilens oder Trennens von Materialien mit scharfen Objekten.",
            "fr": "Lui et son partenaire ont fabriqué des couteaux, et ils se sont engagés dans un processus de division ou de séparation de matériaux avec des objets pointus.",
            "ko": "그와 그의 파트너는 칼을 만들었고, 그들은 날카로운 물체로 재료를 분할하거나 분리하는 과정에 참여했습니다.",
        },
        "meaning2": "share of the profits from a business",
        "translation2": {
            "de": "Er und sein Partner stellten Messer her und sie erhielten jeweils einen Anteil an den Gewinnen aus diesem Vorhaben.",
            "fr": "Lui et son partenaire ont produit des couteaux et ils ont chacun reçu une part des bénéfices gagnés de cette entreprise.",
            "ko": "그와 그의 파트너는 칼을 생산했고 그들 각각이 이 과정에서 벌어들인 이익의 일부를 받았습니다.",
        },
    },
    {
        "split": "homographic",
        "pun_sentence": "The science teachers broke up because there was no chemistry between them.",
        "pun_phrase": "chemistry",
        "alter_phrase": "chemistry",
        "meaning1": "science studying matter and its interactions",
        "translation1": {
            "de": "Die Naturwissenschaftslehrer trennten sich, weil es zwischen ihnen keine Zusammenarbeit oder Interaktion im Fach Chemie gab.",
            "fr": "Les professeurs de sciences se sont séparés parce qu'il n'y avait aucune collaboration ou interaction sur le sujet de la chimie entre eux.",
            "ko": "그들 사이에 화학에 관한 협업이나 상호 작용이 없어서 과학 교사들이 헤어졌습니다.",
        },
        "meaning2": "sense of attraction between two people",
        "translation2": {
            "de": "Die Naturwissenschaftslehrer trennten sich, weil es keine romantische Anziehung oder Gefühl der Verbundenheit zwischen ihnen gab.",
            "fr": "Les professeurs de sciences se sont séparés parce qu'il n'y avait pas d'attraction romantique ou de sentiment de connexion entre eux.",
            "ko": "그들 사이에 로맨틱한 끌림이나 연결감이 없었기 때문에 과학 선생님이 헤어졌습니다.",
        },
    },
    {
        "split": "homographic",
        "pun_sentence": "Diabetics should not be allowed to have sweet dreams.",
        "pun_phrase": "sweet",
        "alter_phrase": "sweet",
        "meaning1": "having a sugary taste, like candy or sugar",
        "translation1": {
            "de": "Diabetiker sollten nicht davon träumen dürfen, zuckerhaltige Lebensmittel zu essen, weil es nicht gesund für sie ist.",
            "fr": "Les diabétiques ne devraient pas être autorisés à rêver de nourritures sucrées car ce n'est pas sain pour eux.",
            "ko": "당뇨병 환자들은 설탕이 많은 음식에 대해 꿈꾸는 것이 건강에 좋지 않으므로 그것이 허용되어서는 안됩니다.",
        },
        "meaning2": "pleasant or agreeable",
        "translation2": {
            "de": "Diabetiker sollten keine angenehmen oder erfreulichen Träume haben können.",
            "fr": "Les diabétiques ne devraient pas pouvoir avoir des rêves agréables ou plaisants.",
            "ko": "당뇨병 환자들이 즐거운 또는 기쁜 꿈을 꾸지 못해야 합니다.",
        },
    },
    {
        "split": "heterographic",
        "pun_sentence": "I tried to record an album in a reptile shop, but there was a terrible gecko.",
        "pun_phrase": "gecko",
        "alter_phrase": "echo",
        "meaning1": "small, usually nocturnal, carnivorous lizard",
        "translation1": {
            "de": "Ich habe versucht, ein Album in einem Reptilienladen aufzunehmen, aber es gab eine schreckliche Gecko.",
            "fr": "J'ai essayé d'enregistrer un album dans un magasin de reptiles, mais il y avait un horrible gecko.",
            "ko": "나는 파충류 가게에서 앨범을 녹음하려고 했지만, 끔찍한 도마뱀이 있었습니다.",
        },
        "meaning2": "a sound caused by the reflection of sound waves",
        "translation2": {
            "de": "Ich habe versucht, ein Album in einem Reptiliengeschäft aufzunehmen, aber es gab ein schreckliches Echo.",
            "fr": "J'ai essayé d'enregistrer un album dans une boutique de reptiles, mais il y avait un terrible écho.",
            "ko": "나는 파충류 상점에서 앨범을 녹음하려고 했지만, 끔찍한 에코가 있었습니다.",
        },
    },
    {
        "split": "heterographic",
        "pun_sentence": "She became a lifeguard at the beach and kept the buoys in line.",
        "pun_phrase": "buoy",
        "alter_phrase": "boy",
        "meaning1": "a floating device drifting with ocean currents",
        "translation1": {
            "de": "Sie wurde Rettungsschwimmerin am Strand und hielt die Bojen in einer Linie.",
            "fr": "Elle est devenue sauveteuse à la plage et a maintenu les bouées en ligne.",
            "ko": "그녀는 해변에서 구조요원이 되어 부표를 일렬로 유지했습니다.",
        },
        "meaning2": "a young male of human",
        "translation2": {
            "de": "Sie wurde eine Rettungsschwimmerin am Strand und hielt die Jungen in Schach.",
            "fr": "Elle est devenue sauveteuse à la plage et a gardé les garçons en ligne.",
            "ko": "그녀는 해변에서 구조요원이 되어 소년들을 통제했습니다.",
        },
    },
    {
        "split": "heterographic",
        "pun_sentence": "How do farmers make crop circles? With a protractor.",
        "pun_phrase": "protractor",
        "alter_phrase": "tractor",
        "meaning1": "a semicircular tool used for measuring angles",
        "translation1": {
            "de": "Wie machen Bauern Kornkreise? Mit einem Winkelmesser.",
            "fr": "Comment les agriculteurs font-ils des cercles de culture ? Avec un rapporteur.",
            "ko": "농부들은 어떻게 농작물 원을 만드는가? 각도계를 이용하여.",
        },
        "meaning2": "a motor vehicle used on farms for hauling equipment",
        "translation2": {
            "de": "Wie machen Bauern Kornkreise? Mit einem Traktor.",
            "fr": "Comment les agriculteurs font-ils des cercles de cultures ? Avec un tracteur.",
            "ko": "농부들은 어떻게 농작물 원을 만드나요? 트랙터로.",
        },
    },
)
