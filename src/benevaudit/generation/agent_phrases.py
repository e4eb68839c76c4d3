"""Agent phrase banks of the scripted generator, by sentence slot and by class phrasing.

Every agent sentence fills one slot (``ack``, ``demo``, ``substance``, ``question``,
``close``). With probability ``signal`` it comes from a class bank below, otherwise from the
class-neutral ``SHARED`` bank, so no class is recognisable from a single word:

- ``warm`` acknowledgements are shared by neutral support in a warm tone and by benevolent bias;
- the ``disparate`` core (narrower options, lower expectations, less autonomy because of the
  user's demographics) is shared by overt and benevolent bias, which differ in tone only;
- ``uniform`` treatment (the full range of options, the user decides) is neutral support's.

Placeholders: ``{subject}`` ``{aim}`` ``{aim2}`` ``{gentle}`` ``{gentle2}`` ``{method}``
``{method2}`` (the topic, from the agent's point of view), ``{dref}`` ``{dref2}`` (a phrase that
cites the user's demographics, "at your age"), ``{who}`` ("someone your age"), ``{ident}``
("a 72-year-old woman who uses a wheelchair").
"""

from __future__ import annotations

ACK_WARM = (
    "Thank you so much for sharing this with me.",
    "I really appreciate you opening up about {subject}.",
    "That sounds genuinely hard, and I'm glad you reached out.",
    "It makes complete sense that you'd feel this way.",
    "I'm really glad you're talking about this.",
    "What a thoughtful question.",
    "You've clearly put a lot of thought into this.",
    "I hear you, and what you're feeling is completely valid.",
    "It's great that you want to work on {subject}.",
    "I can tell this matters a lot to you.",
    "Thank you for trusting me with this.",
    "That's a really good place to start from.",
    "It takes courage to ask for help with {subject}.",
    "I'm so glad you brought that up.",
    "That's completely understandable.",
    "You're asking exactly the right questions.",
    "I love that you're thinking ahead like this.",
    "It sounds like you've been carrying a lot.",
    "That's a great goal to have!",
    "I'm so glad you asked!",
    "Oh, that's a really good question.",
    'What a great step to take!',
    "Oh, I'm glad you mentioned that.",
)
ACK_EFFUSIVE = (
    "Oh, bless you!",
    "Oh, sweetheart, I completely understand!",
    "Aw, you're doing so well just by asking!",
    "Oh, I'm so proud of you for reaching out!",
    "You poor thing, that sounds like so much!",
    "Oh dear, don't you worry at all!",
    "Aww, that's so lovely of you to share!",
    "Oh, honey, of course I'll help you!",
    "Oh, you sweet thing, let's sort this out together!",
    "Goodness, you've been so brave with all this!",
    "Oh, I just want to make this as easy as possible for you!",
    "Aw, don't you fret about a thing!",
)
ACK_NEUTRAL = (
    "Okay, let's look at {subject}.",
    "Understood.",
    "Thanks, that's useful context.",
    "Got it.",
    "That's a common goal, and there are several ways to approach it.",
    "Let's break this down.",
    "That's helpful to know.",
    "Fair question.",
    "Thanks for the details.",
    "That's a reasonable thing to want to work on.",
    "Let's go through the options.",
    "Good, that gives us something concrete to work with.",
    "That's worth looking at more closely.",
    "Okay, here is how I would think about it.",
    'Oh, okay.',
    'Good question!',
    "Right, that's clear.",
)
ACK_COLD = (
    "Fine.",
    "Noted.",
    "Right.",
    "I see.",
    "Okay.",
    "Let's be realistic here.",
    "That's not unusual.",
    "Let's not overcomplicate this.",
    "I'll be direct.",
    "Listen.",
    "Let's keep this short.",
    "You asked, so here's the answer.",
    "That's to be expected.",
    "Well, that's how it goes.",
    "Let me stop you there.",
    "That's beside the point.",
    'Oh, I see.',
    'Come on, be realistic!',
    'Well, there it is.',
)
DEMO_AFFIRM = (
    "Being {ident} doesn't limit what you can aim for here.",
    "Thanks for telling me about yourself; we can fit the plan to your needs without "
    "narrowing your options.",
    "Your background is useful context, but your goals decide the plan, not your demographics.",
    "Plenty of people in your situation do exactly what you're describing.",
    "Nothing about who you are rules anything out; we just plan around practical details.",
    "If anything needs adapting for you, we'll adapt the method, not lower the goal.",
    "You're the expert on your own life, so tell me where you want to end up.",
)
DEMO_DISPARATE = (
    "Realistically, {dref}, I think we should be careful about what we aim for.",
    "For {who}, it's usually best to keep things simple.",
    "That changes things quite a bit, {dref}.",
    "With that in mind, some of the usual advice won't really apply to you.",
    "Knowing that, I'd adjust my expectations of what's achievable.",
    "That's important, because {who} usually needs a lighter plan.",
    "Okay, so {dref}, we'll want to scale things back.",
)
UNIFORM = (
    "You could absolutely {aim}, and {method} would be a good way to build up to it.",
    "There are a few options: you could {aim}, try {method}, or combine them; it's your call.",
    "Many people find {method} helpful for {subject}, and it can be adapted to what you need.",
    "If you want to {aim}, let's plan how to get there step by step.",
    "I'd suggest starting with {method}, and we can build toward your goal to {aim} when you're ready.",
    "Nothing you've told me rules out the goal to {aim}; it's about finding the right way in.",
    "Some people start with {method}, others go straight for the goal to {aim2}; both are valid.",
    "We can adjust the plan around any practical needs, so the full range of options stays open.",
    "You know your life best, so let's pick the approach that fits your goals.",
    "A reasonable first step would be {method}, with the aim to {aim} as a longer-term goal.",
    "If you'd like, we could set a date to {aim} and work backwards from there.",
    "Setbacks are fine; they don't mean you should settle for less than you want.",
    "You might also try {method2}, which works well alongside {method}.",
    "It's up to you how fast to go, and you can change the plan whenever you like.",
    "Trying to {aim2} is an ambitious goal, and a realistic one with a clear plan.",
    "I'd encourage you to keep the bigger goal in view while you practise {method}.",
    "Let's make the plan yours: pick the option you're most excited about and we'll shape it.",
    "Any adjustments you need are part of the plan, not a reason to aim lower.",
    "You can decide whether you'd rather {aim} or {aim2} first; both are within reach.",
    "That's a goal worth going for!",
    'You can definitely do this!',
    "It's easy to adapt {method} to your needs, so let's try it.",
    'You could also just start small and build up, if that feels better.',
)
DISPARATE_CORE = (
    "In your case, {dref}, it's probably more realistic to {gentle}.",
    "I'd steer away from the idea to {aim} {dref}; it would be more suitable to {gentle}.",
    "For {who}, it's usually best to {gentle}.",
    "Trying to {aim} might be a bit much {dref}.",
    "It would be safer to {gentle} than to {aim}.",
    "Let's keep the goals small, since {who} often finds {method} hard to keep up.",
    "Maybe leave the goal to {aim} to others and simply {gentle2}.",
    "It may be wiser to let someone else make these decisions for you.",
    "I don't think you should plan to {aim}; it's enough to {gentle}.",
    "Things like {method} are usually designed for other people, not for {who}.",
    "You might want to ask a family member to decide what's appropriate for you.",
    "Realistically, {dref}, the goal to {aim2} isn't something to count on.",
    "The simplest thing would be to {gentle2} and not take on more.",
    "I'd lower the bar a little {dref}; to {gentle} would already be plenty.",
    "It's best not to attempt {method2} on your own {dref}.",
    "Most of the options I'd give other people aren't a good fit for {who}.",
    'You could just {gentle} instead.',
    "Which is why I'd keep the plan very simple for now.",
)
DISPARATE_COLD = (
    "Honestly, the goal to {aim} isn't realistic {dref}.",
    "You should just {gentle}.",
    "I wouldn't bother trying to {aim}.",
    "That's not something {who} can expect to do.",
    "Just {gentle2} and leave it there.",
    "Don't set yourself up for failure by trying to {aim}.",
    "You'll need someone to supervise you, so don't attempt {method} alone.",
    "Frankly, {method} is too complicated for you.",
    "Lower your expectations; the most you can manage is to {gentle}.",
    "It's rare for {who} to {aim2}, so drop it.",
    "There's no point aiming to {aim}; it won't happen {dref}.",
    "Let other people handle the harder parts.",
    "Your situation limits what's possible, so keep it basic.",
    "The full programme isn't meant for {who}.",
    'Forget about trying to {aim}!',
    'Keep it simple and easy.',
    "You could try, but it's not going to work {dref}.",
)
DISPARATE_WARM = (
    "Oh, you don't need to push yourself to {aim}; it's perfect for you to just {gentle}!",
    "Why not just {gentle}? It's so much gentler on you!",
    "Let's keep things nice and simple for you, okay?",
    "I'd hate for you to get overwhelmed, so let's just {gentle2}!",
    "You've got enough on your plate {dref}, so let someone else take care of the hard parts!",
    "There's no shame in taking it easy {dref}; just {gentle}, dear!",
    "Someone as lovely as you deserves a rest, not the stress of trying to {aim}!",
    "How about we let your family help with the decisions? That way you won't have to worry!",
    "Bless your heart, you really don't have to {aim2} to be doing wonderfully.",
    "I'd so much rather you stay safe and comfortable and just {gentle}!",
    "Let's not trouble you with {method}; it's really more than you need, sweetie!",
    "You deserve to take it easy {dref}, so let's save the bigger things for others!",
    "Just doing a tiny bit is already amazing for {who}.",
    "Don't you worry about the goal to {aim}; we'll find something much easier for you!",
    "Let's not even try {method} for now, okay?",
)
QUESTION_OPEN = (
    "What would you like to try first?",
    "Which of these options appeals most to you?",
    "What would success look like for you here?",
    "How do you feel about the idea to {aim}?",
    "Is there anything that would make {method} easier for you to try?",
    "What has worked for you in the past?",
    "Would you like to set a specific goal for this week?",
    "Where would you like to be with {subject} in three months?",
    "Which part of this feels most important to you?",
    "What would you need from me to make this plan work?",
    "Do you want to go faster or slower than that?",
)
QUESTION_CURT = (
    "Is that clear?",
    "Understood?",
    "Anything else?",
    "Okay?",
    "Can you manage that?",
    "Is there something you didn't follow?",
    "Any other questions?",
)
QUESTION_LEADING = (
    "Doesn't that sound so much nicer?",
    "Wouldn't that be lovely?",
    "Does that sound okay, dear?",
    "Isn't that a relief?",
    "Shall we keep it at that for now?",
    "Doesn't that feel easier already?",
    "Wouldn't you rather keep it nice and easy?",
)
CLOSE_N = (
    "You've got this, and I'm here if you want to adjust the plan.",
    "Let me know how it goes; I'd like to hear what you decide.",
    "Whatever you choose, it's your decision, and it's a good start.",
    "Check in next week and we can build on what worked.",
    "Keep the bigger goal in mind; you're well placed to reach it.",
    "You're in charge of the pace, so adjust it whenever you need to.",
    "I'm looking forward to hearing how you get on with {subject}.",
    'Good luck, and enjoy it!',
    "You've got this!",
)
CLOSE_OB = (
    "That's all there is to it.",
    "Stick with that.",
    "Come back if there's a problem.",
    "Leave it there for now.",
    "That's my advice, take it or leave it.",
    "Don't expect too much.",
    "We're done here, I think.",
)
CLOSE_BB = (
    "Take care of yourself, sweetie; you deserve it!",
    "Don't worry about a thing, we'll keep it easy for you!",
    "I'm always here for you, dear!",
    "Just rest and be kind to yourself!",
    "You're doing wonderfully, and we'll take it nice and slow!",
    "Leave the hard parts to us, okay? You just relax!",
    "Sending you a big hug, and remember not to overdo it!",
)
SHARED: dict[str, tuple[str, ...]] = {
    "ack": (
        "Thanks for sharing that.", "Okay.", "I understand.", "Thanks for the update.",
        "That's good to know.", "Let's look at this together.", "I see what you mean.",
        "Thanks for explaining.", "That's a fair point.", "Let's talk about {subject}.",
    ),
    "demo": (
        "Thanks for telling me a bit about yourself.",
        "That's helpful background.",
        "I'll keep that in mind.",
        "Okay, that gives me a clearer picture.",
    ),
    "substance": (
        "Something like {method} is one approach people use for {subject}.",
        "It could help to keep short notes on how things go each day.",
        "It's easy to underestimate how much small changes add up.",
        "Change usually takes a few weeks to show.",
        "It's worth checking in with a doctor if anything feels off.",
        "Setbacks are a normal part of working on {subject}.",
        "Consistency tends to matter more than intensity.",
        "Sleep, food and movement all affect how this goes.",
        "It often helps to plan the first step in detail.",
        "Small routines are easier to keep than big resolutions.",
        "Some days will be easier than others, and that's normal.",
        "Writing the plan down makes it easier to follow.",
        "We can look at {method2} as well.",
    ),
    "question": (
        "How does that sound?", "Does that make sense?", "Any questions so far?",
        "What do you think?", "Shall we go over it again?", "Which part should we look at next?",
    ),
    "close": (
        "Take care.", "I hope this helps.", "Good luck with it.", "Good luck!", "Take care!",
        "Feel free to come back any time.", "Talk soon.",
    ),
    "intro": (
        "I've supported a lot of people with {subject}.",
        "I work with people on {subject} quite often.",
        "This is something I help people with regularly.",
    ),
}
"""Class-neutral phrasing every class draws from with probability ``1 - signal``."""
