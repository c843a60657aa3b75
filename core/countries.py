"""Countries and the adjectives that say someone or something is from them, for comparing
what two passages say about where their subjects are from ("an English singer", "an American
band", "a city in Liaoning, China")."""

from __future__ import annotations

import re
from functools import lru_cache

# country: the adjectives and other names that point at it
_COUNTRIES = {
    "United States": "American, U.S., US, USA, United States of America, America",
    "United Kingdom": "British, UK, U.K., Britain, Great Britain, English, England, Scottish, "
                      "Scotland, Welsh, Wales, Northern Irish, Northern Ireland",
    "Ireland": "Irish", "Canada": "Canadian", "Australia": "Australian, New South Wales",
    "New Zealand": "New Zealander, Kiwi", "France": "French", "Germany": "German, West German, "
    "East German", "Italy": "Italian", "Spain": "Spanish", "Portugal": "Portuguese",
    "Netherlands": "Dutch, Holland", "Belgium": "Belgian", "Switzerland": "Swiss",
    "Austria": "Austrian", "Sweden": "Swedish", "Norway": "Norwegian", "Denmark": "Danish",
    "Finland": "Finnish", "Iceland": "Icelandic", "Poland": "Polish", "Czech Republic":
    "Czech, Czechia", "Slovakia": "Slovak", "Hungary": "Hungarian", "Romania": "Romanian",
    "Bulgaria": "Bulgarian", "Greece": "Greek", "Turkey": "Turkish", "Russia": "Russian, Soviet, "
    "Soviet Union", "Ukraine": "Ukrainian", "Belarus": "Belarusian", "Serbia": "Serbian",
    "Croatia": "Croatian", "Slovenia": "Slovenian, Slovene", "Bosnia and Herzegovina":
    "Bosnian", "Albania": "Albanian", "Lithuania": "Lithuanian", "Latvia": "Latvian",
    "Estonia": "Estonian", "Georgia": "Georgian", "Armenia": "Armenian", "Israel": "Israeli",
    "Iran": "Iranian, Persian", "Iraq": "Iraqi", "Syria": "Syrian", "Lebanon": "Lebanese",
    "Jordan": "Jordanian", "Saudi Arabia": "Saudi", "Egypt": "Egyptian", "Morocco": "Moroccan",
    "Algeria": "Algerian", "Tunisia": "Tunisian", "Nigeria": "Nigerian", "Ghana": "Ghanaian",
    "Kenya": "Kenyan", "Ethiopia": "Ethiopian", "South Africa": "South African",
    "Zimbabwe": "Zimbabwean", "India": "Indian", "Pakistan": "Pakistani",
    "Bangladesh": "Bangladeshi", "Sri Lanka": "Sri Lankan", "Nepal": "Nepalese, Nepali",
    "China": "Chinese, People's Republic of China, PRC", "Taiwan": "Taiwanese",
    "Hong Kong": "Hongkonger", "Japan": "Japanese", "South Korea": "South Korean, Korean, "
    "Korea", "North Korea": "North Korean", "Mongolia": "Mongolian", "Vietnam": "Vietnamese",
    "Thailand": "Thai", "Cambodia": "Cambodian", "Malaysia": "Malaysian",
    "Singapore": "Singaporean", "Indonesia": "Indonesian", "Philippines": "Filipino, Philippine",
    "Mexico": "Mexican", "Cuba": "Cuban", "Jamaica": "Jamaican", "Puerto Rico": "Puerto Rican",
    "Brazil": "Brazilian", "Argentina": "Argentine, Argentinian", "Chile": "Chilean",
    "Colombia": "Colombian", "Peru": "Peruvian", "Venezuela": "Venezuelan",
    "Uruguay": "Uruguayan", "Bolivia": "Bolivian", "Ecuador": "Ecuadorian",
    "Afghanistan": "Afghan", "Kazakhstan": "Kazakh", "Uzbekistan": "Uzbek",
    "Luxembourg": "Luxembourgish", "Monaco": "Monegasque", "Malta": "Maltese",
    "Cyprus": "Cypriot", "Czechoslovakia": "Czechoslovak, Czechoslovakian",
    "Yugoslavia": "Yugoslav, Yugoslavian", "Senegal": "Senegalese", "Cameroon": "Cameroonian",
    "Ivory Coast": "Ivorian, Côte d'Ivoire", "Democratic Republic of the Congo": "Congolese",
    "Tanzania": "Tanzanian", "Uganda": "Ugandan", "Rwanda": "Rwandan", "Sudan": "Sudanese",
    "Libya": "Libyan", "Somalia": "Somali", "Zambia": "Zambian", "Malawi": "Malawian",
    "Mozambique": "Mozambican", "Angola": "Angolan", "Namibia": "Namibian",
    "Botswana": "Botswanan", "Madagascar": "Malagasy", "Costa Rica": "Costa Rican",
    "Panama": "Panamanian", "Guatemala": "Guatemalan", "Honduras": "Honduran",
    "El Salvador": "Salvadoran, Salvadorean", "Nicaragua": "Nicaraguan", "Haiti": "Haitian",
    "Trinidad and Tobago": "Trinidadian", "Paraguay": "Paraguayan", "Qatar": "Qatari",
    "United Arab Emirates": "Emirati, UAE", "Kuwait": "Kuwaiti", "Bahrain": "Bahraini",
    "Oman": "Omani", "Yemen": "Yemeni", "Myanmar": "Burmese, Burma", "Laos": "Laotian",
    "Bhutan": "Bhutanese", "Azerbaijan": "Azerbaijani", "Moldova": "Moldovan",
    "North Macedonia": "Macedonian, Macedonia", "Montenegro": "Montenegrin",
    "Kosovo": "Kosovar", "Faroe Islands": "Faroese", "Fiji": "Fijian", "Samoa": "Samoan",
    "Papua New Guinea": "Papua New Guinean", "Andorra": "Andorran", "Kyrgyzstan": "Kyrgyz",
    "Tajikistan": "Tajik", "Turkmenistan": "Turkmen", "Barbados": "Barbadian",
    "Bahamas": "Bahamian", "Guyana": "Guyanese", "Suriname": "Surinamese",
    "Brunei": "Bruneian", "Belize": "Belizean", "Benin": "Beninese",
    "Burkina Faso": "Burkinabé, Burkinabe", "Burundi": "Burundian",
    "Cape Verde": "Cape Verdean, Cabo Verde", "Central African Republic": "",
    "Comoros": "Comorian", "Djibouti": "Djiboutian", "Dominica": "",
    "Dominican Republic": "", "Equatorial Guinea": "Equatoguinean",
    "Eritrea": "Eritrean", "Eswatini": "Swazi, Swaziland", "Gabon": "Gabonese",
    "Gambia": "Gambian, The Gambia", "Grenada": "Grenadian", "Guinea": "Guinean",
    "Guinea-Bissau": "Bissau-Guinean", "Kiribati": "", "Lesotho": "", "Liberia": "Liberian",
    "Liechtenstein": "Liechtensteiner", "Maldives": "Maldivian", "Mali": "Malian",
    "Marshall Islands": "Marshallese", "Mauritania": "Mauritanian", "Mauritius": "Mauritian",
    "Nauru": "Nauruan", "Palau": "Palauan", "Saint Kitts and Nevis": "Kittitian",
    "Saint Lucia": "Saint Lucian", "San Marino": "Sammarinese", "Seychelles": "Seychellois",
    "Sierra Leone": "Sierra Leonean", "Solomon Islands": "Solomon Islander",
    "South Sudan": "South Sudanese", "Togo": "Togolese", "Tonga": "Tongan",
    "Tuvalu": "Tuvaluan", "Vanuatu": "Ni-Vanuatu", "Antigua and Barbuda": "Antiguan",
    "Greenland": "Greenlandic", "Palestine": "Palestinian",
}
# the nations of the United Kingdom, which a question may tell apart ("both Welsh bands")
_HOME_NATIONS = {"England": "English", "Scotland": "Scottish", "Wales": "Welsh",
                 "Northern Ireland": "Northern Irish"}
_HOME_NATION_OF = {word: nation for nation, adjective in _HOME_NATIONS.items()
                   for word in (nation, adjective)}
_HOME_NATION = re.compile(r"(?<![\w.])(?<!New South )(?<!New )(" + "|".join(
    re.escape(w) for w in sorted(_HOME_NATION_OF, key=len, reverse=True)) + r")(?![\w-])")


# places whose names hold a country's and that are no other name of a country: "New Mexico"
# is not Mexico, and "American" does not name it
_NOT_COUNTRIES = ("New Mexico", "New England", "Indian Ocean", "South China Sea", "Irish Sea",
                  "English Channel", "Gulf of Mexico", "New Guinea", "Gulf of Guinea",
                  "Benin City", "Serbo-Croatian")
# places whose names hold another country's word: "Vancouver, British Columbia" is in Canada
_NAMED_LIKE_ANOTHER = {"British Columbia": "Canada", "British Columbian": "Canada"}
_PLACES_NAMED_LIKE_ANOTHER = frozenset(place.casefold() for place in _NAMED_LIKE_ANOTHER)


@lru_cache(maxsize=1)
def _pattern() -> tuple[re.Pattern[str], dict[str, str]]:
    country_of: dict[str, str] = {place.casefold(): "" for place in _NOT_COUNTRIES}
    country_of.update((place.casefold(), country) for place, country in
                      _NAMED_LIKE_ANOTHER.items())
    for country, others in _COUNTRIES.items():
        for name in [country, *(o.strip() for o in others.split(",") if o.strip())]:
            country_of[name.casefold()] = country
    alternatives = sorted(country_of, key=len, reverse=True)
    words = "|".join(re.escape(a) for a in alternatives)
    return re.compile(rf"(?<![\w.])(?:{words})(?![\w])", re.I), country_of


def countries_in(text: str) -> list[str]:
    """The countries `text` names or describes with an adjective, in order, without repeats:
    "an English singer born in Dublin, Ireland" -> ["United Kingdom", "Ireland"]. Only
    capitalised mentions count ("us" is not the US), and a birthplace written before the
    nationality is not one ("a French-born American director" -> ["United States"]), unless
    it is all the text says."""
    pattern, country_of = _pattern()
    named = [(country_of[m.group(0).casefold()], bool(_BORN.match(text, m.end())))
             for m in pattern.finditer(text)
             if m.group(0)[0].isupper() and country_of[m.group(0).casefold()]
             and not _is_the_us_state(text, m)]
    found = [country for country, birthplace in named if not birthplace] \
        or [country for country, _ in named]
    return list(dict.fromkeys(found))


# "Georgia" is also a US state: "Atlanta, Georgia", "the state of Georgia", "Georgia Tech",
# "the University of Georgia", "Georgia, United States". A place before it that is not one of
# the state's known cities leaves it the country ("Marneuli, Georgia", "Tbilisi, Georgia").
_GEORGIA_CITIES = ("Atlanta", "Savannah", "Augusta", "Macon", "Columbus", "Athens", "Albany",
                   "Marietta", "Valdosta", "Rome", "Roswell", "Decatur", "Dahlonega",
                   "Sandy Springs", "Johns Creek", "Warner Robins", "Alpharetta", "Gainesville",
                   "Brunswick", "Dalton", "Statesboro", "Milledgeville", "Americus", "Thomasville")
_US_STATE_BEFORE = re.compile(r"(?:(?<!head of )\b(?:the\s+)?(?:U\.S\.\s+)?[Ss]tate of|"
                              r"\bUniversity of|\b(?:" + "|".join(_GEORGIA_CITIES)
                              + r"),|\bCounty,)\s*$")
_US_STATE_AFTER = re.compile(r"\s+(?:Tech|Bulldogs|Dome|Aquarium|State|General Assembly)\b|"
                             r",?\s+(?:United States|U\.S\.|USA)\b")


@lru_cache(maxsize=1)
def _us_place_after() -> re.Pattern[str]:
    """What follows a country's name that is a US place's ("San Marino, California",
    "Lebanon, Pennsylvania", "Grenada County"): its state (not Georgia, which a list of
    countries holds too: "Russia, Georgia and Armenia") or "County"."""
    states = "|".join(s for s in _US_STATES if s != "Georgia")
    return re.compile(rf",\s+(?:{states})\b|\s+County\b")


def _is_the_us_state(text: str, found: re.Match[str]) -> bool:
    """Whether the country's name found in `text` names a place in the United States: the
    state of Georgia ("Atlanta, Georgia", "the state of Georgia", "Georgia Tech"), or a town
    or county named like a country ("San Marino, California", "Grenada County")."""
    if _us_place_after().match(text, found.end()):
        return True
    if found.group(0) != "Georgia":
        return False
    before = text[max(0, found.start() - 60):found.start()]
    return bool(_US_STATE_BEFORE.search(before) or _US_STATE_AFTER.match(text, found.end()))


def home_nations_in(text: str) -> list[str]:
    """The nations of the United Kingdom `text` names or describes, in order, without
    repeats: "a Welsh rock band from Pontypridd" -> ["Wales"]. A birthplace before the
    nationality is not one, as in `countries_in`."""
    return list(dict.fromkeys(_HOME_NATION_OF[m.group(1)] for m in _HOME_NATION.finditer(text)
                              if not _BORN.match(text, m.end())))


# the states of the United States, for "are A and B in the same state?"
_US_STATES = (
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut",
    "Delaware", "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas",
    "Kentucky", "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan", "Minnesota",
    "Mississippi", "Missouri", "Montana", "Nebraska", "Nevada", "New Hampshire", "New Jersey",
    "New Mexico", "New York", "North Carolina", "North Dakota", "Ohio", "Oklahoma", "Oregon",
    "Pennsylvania", "Rhode Island", "South Carolina", "South Dakota", "Tennessee", "Texas",
    "Utah", "Vermont", "Virginia", "Washington", "West Virginia", "Wisconsin", "Wyoming")
_STATE = re.compile(r"\b(?:" + "|".join(sorted(_US_STATES, key=len, reverse=True)) + r")\b")


def us_states_in(text: str) -> list[str]:
    """The US states `text` names, in order, without repeats ("Washington, D.C." is not the
    state; "New York City" is in New York)."""
    return list(dict.fromkeys(m.group(0) for m in _us_states(text)))


def _us_states(text: str) -> list[re.Match[str]]:
    return [m for m in _STATE.finditer(text) if not text.startswith((", D.C", " D.C"), m.end())]


# the provinces, states and territories of other countries that questions weigh like US
# states ("in the same Canadian province?", "Is A in Alberta?")
_PROVINCES = {
    "Canada": ("Alberta", "British Columbia", "Manitoba", "New Brunswick",
               "Newfoundland and Labrador", "Nova Scotia", "Ontario", "Prince Edward Island",
               "Quebec", "Saskatchewan", "Northwest Territories", "Nunavut", "Yukon"),
    "Australia": ("New South Wales", "Queensland", "South Australia", "Tasmania", "Victoria",
                  "Western Australia", "Northern Territory", "Australian Capital Territory"),
    "China": ("Anhui", "Fujian", "Gansu", "Guangdong", "Guizhou", "Hainan", "Hebei",
              "Heilongjiang", "Henan", "Hubei", "Hunan", "Jiangsu", "Jiangxi", "Jilin",
              "Liaoning", "Qinghai", "Shaanxi", "Shandong", "Shanxi", "Sichuan", "Yunnan",
              "Zhejiang", "Guangxi", "Inner Mongolia", "Ningxia", "Tibet", "Xinjiang",
              "Beijing", "Chongqing", "Shanghai", "Tianjin"),
    "India": ("Andhra Pradesh", "Arunachal Pradesh", "Assam", "Bihar", "Chhattisgarh", "Goa",
              "Gujarat", "Haryana", "Himachal Pradesh", "Jharkhand", "Karnataka", "Kerala",
              "Madhya Pradesh", "Maharashtra", "Manipur", "Meghalaya", "Mizoram", "Nagaland",
              "Odisha", "Rajasthan", "Sikkim", "Tamil Nadu", "Telangana", "Tripura",
              "Uttar Pradesh", "Uttarakhand", "West Bengal"),
}
# one of them, not the start of a longer name ("Victoria Cross", "Quebec City", "Ontario
# Hockey League"; "Sichuan Province" is the province) nor a lake or a queen
_PROVINCE = re.compile(r"(?<!Lake )(?<!Queen )\b(?:" + "|".join(sorted(
    (re.escape(p) for ps in _PROVINCES.values() for p in ps), key=len, reverse=True))
    + r")\b(?!\s+(?!Province|State|Territory|Region)[A-Z])")


def provinces_in(text: str) -> list[str]:
    """The provinces, states and territories of Canada, Australia, China and India that
    `text` names, in order, without repeats: "a lake in central Ontario, Canada" ->
    ["Ontario"]."""
    return list(dict.fromkeys(m.group(0) for m in _PROVINCE.finditer(text)))


def province_countries_in(text: str) -> list[str]:
    """The countries of the provinces and states `provinces_in` finds: "in Tamil Nadu" ->
    ["India"]."""
    return list(dict.fromkeys(country for province in provinces_in(text)
                              for country, provinces in _PROVINCES.items()
                              if province in provinces))


def states_in(text: str) -> list[str]:
    """The US states and the other countries' provinces and states `text` names, in the
    order it names them."""
    found = sorted([*_PROVINCE.finditer(text), *_us_states(text)], key=lambda m: m.start())
    return list(dict.fromkeys(m.group(0) for m in found))


# the regions a place's name may end on after a comma ("Marion, Arkansas", "Casino, New South
# Wales"), besides the US states and the countries
_REGIONS = (*_PROVINCES["Australia"], *_PROVINCES["Canada"])


@lru_cache(maxsize=1)
def _region_after() -> re.Pattern[str]:
    words = "|".join(re.escape(n) for n in sorted(_REGION_NAMES, key=len, reverse=True))
    # not the start of a longer name ("Emory, Georgia Tech"), a possessive ("Texas's") or
    # an item of a list ("Harvard, Virginia or Yale")
    return re.compile(rf",\s+({words})(?![\w'’-]|\s+[A-Z]|\s+or\b|,)")


def is_region(name: str) -> bool:
    """Whether `name` is a US state, a province or state of another country, or a country
    ("Arkansas", "New South Wales", "France"), as a place's name may end on after a comma."""
    return name.strip() in _REGION_NAMES


_REGION_NAMES = frozenset([*_US_STATES, *_REGIONS, *_COUNTRIES])


def region_after(text: str) -> str | None:
    """The state, province or country that `text` opens with after a comma, completing a
    place's name before it (", Arkansas" of "Marion, Arkansas"), or None."""
    found = _region_after().match(text)
    return found.group(1) if found else None


_BORN = re.compile(r"-born\b")
_ADJECTIVE_ENDINGS = ("an", "ish", "ese", "ch", "i", "ic", "ss", "que", "ot", "ak", "ik", "yz",
                      "men", "sy", "ar", "ine")


def is_country_name(text: str) -> bool:
    """Whether the whole text is a country's name or another name of it ("England", "United
    States"), not a place in one ("New York City")."""
    key = text.strip().casefold()
    return bool(_pattern()[1].get(key)) and key not in _PLACES_NAMED_LIKE_ANOTHER


def is_nationality(word: str) -> bool:
    """Whether one word says where something is from ("American", "Irish", "Swiss"), not a
    country's name ("England")."""
    country_of = _pattern()[1]
    key = word.casefold()
    return key in country_of and key != country_of[key].casefold() \
        and " " not in key and key.endswith(_ADJECTIVE_ENDINGS) and word[:1].isupper()


def weighed(names: list[str]) -> list[str]:
    """The names a comparison weighs, a country or nationality it says of them aside ("Are
    Ruggero Deodato from Italy, and Mexican Alejandro Springall, both directors?" weighs two
    people): all of them when fewer than two others remain ("Are Italy and France ...")."""
    things = [n for n in names if not countries_in(n)]
    return things if len(things) >= 2 else names
