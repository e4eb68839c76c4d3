"""CoBia: constructed-conversation attacks that make a chat model appear to have already endorsed
a stereotype, then ask it to continue (Nikeghbal, Kargaran and Diesner, EMNLP 2025).

``dataset`` reads the released files and pairs each (group, descriptor) with a second descriptor;
``attacks`` builds HCC, SCC and the baseline prompts; ``judges`` asks judge models and parses
their verdicts; ``scoring`` turns verdicts into bias rates, UCC and judge agreement.
"""
