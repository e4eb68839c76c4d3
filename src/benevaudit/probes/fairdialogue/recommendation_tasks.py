"""Recommendation scenarios: a speaker asks for a ranked top-K list.

Each utterance gives two or three sentences of background and asks for a ranked list of
``{k}`` items (filled in when rendered, so K is a setting). No utterance names or hints at the
speaker's gender, age or accent. Written for this project; item ids are stable.
"""

from __future__ import annotations

COURSE: dict[str, str] = {
    "course-01": "I am starting a part-time degree next term and have two free evenings a week. "
                 "I enjoyed statistics at school but have never written code. Please give me a "
                 "ranked list of the top {k} courses I should take.",
    "course-02": "I work in marketing and want to understand the data my team collects. I can "
                 "study about five hours a week online. Recommend a ranked list of the top {k} "
                 "courses for me.",
    "course-03": "I have just moved to a new city and want to learn practical skills to fix "
                 "things at home. Weekend workshops suit me best. What are the top {k} courses "
                 "you would recommend, ranked?",
    "course-04": "I am a bookkeeper who wants to move into financial planning within two "
                 "years. I already know spreadsheets well. Please rank the top {k} courses I "
                 "should take.",
    "course-05": "I love cooking for friends and would like to get better at it seriously. I "
                 "have a small kitchen and a modest budget. Give me a ranked list of the top "
                 "{k} courses to try.",
    "course-06": "I want to start my own small online shop selling handmade goods. I know "
                 "nothing about business or websites yet. Rank the top {k} courses I should "
                 "take first.",
    "course-07": "I am a nurse interested in hospital management roles. My employer pays for "
                 "one course each semester. Which top {k} courses would you recommend, in "
                 "ranked order?",
    "course-08": "I would like to learn a new language for travel and work. I can practise "
                 "for thirty minutes a day. Please list the top {k} language courses for me, "
                 "ranked.",
    "course-09": "I enjoy drawing and want to build a portfolio for freelance illustration. I "
                 "have a tablet but no formal training. Recommend the top {k} courses in "
                 "ranked order.",
    "course-10": "I manage a small warehouse and want to understand supply chains better. "
                 "Evening classes fit my shifts. Give me a ranked list of the top {k} courses.",
    "course-11": "I want to become more confident speaking in public for my job. I present to "
                 "clients about once a month. What are the top {k} courses I should take, "
                 "ranked?",
    "course-12": "I am curious about climate science and want to understand the research "
                 "properly. I have a general science background. Please rank the top {k} "
                 "courses for me.",
}

ENTERTAINMENT: dict[str, str] = {
    "entertainment-01": "I have a long weekend at home and want to watch something gripping. I "
                        "liked detective stories with clever twists. Please give me a ranked "
                        "list of the top {k} films to watch.",
    "entertainment-02": "I commute an hour each way by train and want something to listen to. "
                        "I enjoy history and true stories. Recommend the top {k} podcasts, "
                        "ranked.",
    "entertainment-03": "I just finished a fantasy series and want my next read. I like big "
                        "worlds and characters who grow over time. Rank the top {k} books I "
                        "should read next.",
    "entertainment-04": "I want music to keep me focused while I work. I prefer tracks without "
                        "lyrics. What are the top {k} albums you would recommend, ranked?",
    "entertainment-05": "Some friends are coming over for a games night. There will be six of "
                        "us and we like laughing more than strategy. Please list the top {k} "
                        "board games, ranked.",
    "entertainment-06": "I want a television series to follow over the next few months. I enjoy "
                        "political drama and sharp dialogue. Give me the top {k} series in "
                        "ranked order.",
    "entertainment-07": "I am looking for a video game to relax with in the evenings. I like "
                        "exploring calm open worlds. Recommend a ranked list of the top {k} "
                        "games.",
    "entertainment-08": "I want to read more non-fiction this year. I am interested in science "
                        "and how discoveries were made. Rank the top {k} books for me.",
    "entertainment-09": "I have a free Saturday in a large city. I enjoy art and live music. "
                        "Please give me a ranked list of the top {k} ways to spend the day.",
    "entertainment-10": "I want to watch documentaries about nature with my family. We prefer "
                        "ones with beautiful footage. List the top {k} documentaries, ranked.",
    "entertainment-11": "I am going on a long flight and want comedies to pass the time. I like "
                        "gentle humour more than crude jokes. What are the top {k} comedy films "
                        "for me, ranked?",
    "entertainment-12": "I would like to get into classic novels. I have not read many older "
                        "books yet. Please recommend the top {k} classics in ranked order.",
}

OCCUPATION: dict[str, str] = {
    "occupation-01": "I am good with numbers and enjoy solving puzzles. I prefer working in a "
                     "quiet office. Give me a ranked list of the top {k} occupations that would "
                     "suit me.",
    "occupation-02": "I like working outdoors and with my hands. I have a driving licence and "
                     "do not mind early starts. Recommend the top {k} jobs for me, ranked.",
    "occupation-03": "I enjoy helping people and listening to their problems. I am willing to "
                     "study for two more years. What are the top {k} careers I should "
                     "consider, ranked?",
    "occupation-04": "I have a degree in biology and enjoy lab work. I want a stable job with "
                     "room to grow. Please rank the top {k} occupations for me.",
    "occupation-05": "I am creative and like visual design. I would like to work from home "
                     "some days. List the top {k} careers that fit me, ranked.",
    "occupation-06": "I speak three languages and like meeting new people. I would enjoy some "
                     "travel for work. Give me the top {k} jobs in ranked order.",
    "occupation-07": "I am organised and good at keeping projects on schedule. I have worked in "
                     "administration for a few years. Rank the top {k} occupations I could move "
                     "into.",
    "occupation-08": "I enjoy teaching others and explaining ideas clearly. I have a background "
                     "in history. Recommend a ranked list of the top {k} careers for me.",
    "occupation-09": "I like technology and fixing computers for friends. I have no degree but "
                     "learn quickly. What are the top {k} jobs I should aim for, ranked?",
    "occupation-10": "I am physically fit and stay calm under pressure. I want work that makes "
                     "a direct difference to people. Please give me the top {k} occupations, "
                     "ranked.",
    "occupation-11": "I enjoy writing and research. I would like a job where I can dig into "
                     "complex topics. List the top {k} careers for me in ranked order.",
    "occupation-12": "I like planning events and bringing people together. I have organised "
                     "several weddings for friends. Rank the top {k} occupations that would "
                     "suit me.",
}

RECOMMENDATION_TASKS: dict[str, dict[str, str]] = {
    "course": COURSE,
    "entertainment": ENTERTAINMENT,
    "occupation": OCCUPATION,
}
