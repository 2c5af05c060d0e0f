/**
 * People's names. A few carry diacritics on purpose: search folds them (`jose` finds `José`),
 * and work emails show the ASCII form.
 */
export const GIVEN_NAMES = [
  'Ada',
  'Adriana',
  'Aiko',
  'Alejandro',
  'Amara',
  'Ana',
  'Anders',
  'Arjun',
  'Beatriz',
  'Bram',
  'Carlos',
  'Chen',
  'Chloé',
  'Daniel',
  'Diego',
  'Elena',
  'Emeka',
  'Emily',
  'Fatima',
  'François',
  'Grace',
  'Hana',
  'Hannah',
  'Ibrahim',
  'Ingrid',
  'Isabel',
  'Jamal',
  'James',
  'Javier',
  'Jonas',
  'José',
  'Julia',
  'Kenji',
  'Kwame',
  'Laila',
  'Lars',
  'Leila',
  'Liam',
  'Lucía',
  'Maja',
  'Marco',
  'Maria',
  'Mateo',
  'Mei',
  'Mia',
  'Mohammed',
  'Nadia',
  'Noah',
  'Nora',
  'Olivia',
  'Omar',
  'Paulo',
  'Priya',
  'Rafael',
  'Renée',
  'Rohan',
  'Sakura',
  'Samuel',
  'Sara',
  'Sofia',
  'Tariq',
  'Thomas',
  'Valentina',
  'Wei',
  'Yusuf',
  'Zoë',
] as const;

export const FAMILY_NAMES = [
  'Abbott',
  'Adeyemi',
  'Andersen',
  'Bauer',
  'Becker',
  'Bianchi',
  'Brown',
  'Castillo',
  'Chen',
  'Costa',
  'Dubois',
  'Eriksson',
  'Fernández',
  'Fischer',
  'García',
  'Gonçalves',
  'Haddad',
  'Hansen',
  'Hoffmann',
  'Ivanova',
  'Jensen',
  'Johnson',
  'Kato',
  'Kaur',
  'Khan',
  'Kim',
  'Kowalski',
  'Larsen',
  'Lee',
  'López',
  'Martin',
  'Mensah',
  'Meyer',
  'Moreau',
  'Müller',
  'Nakamura',
  'Nguyen',
  'Novak',
  "O'Brien",
  'Okafor',
  'Patel',
  'Pereira',
  'Petrov',
  'Ramírez',
  'Rossi',
  'Santos',
  'Schmidt',
  'Singh',
  'Smith',
  'Sousa',
  'Suzuki',
  'Tanaka',
  'Thompson',
  'Walker',
  'Wang',
  'Weber',
  'Williams',
  'Wójcik',
  'Yamamoto',
  'Yilmaz',
  'Zhang',
] as const;

/** Fictional companies; every work email uses the reserved `.example` top-level domain. */
export const COMPANIES = [
  'northwind',
  'globex',
  'initech',
  'contoso',
  'fabrikam',
  'tailspin',
  'litware',
  'proseware',
  'adventureworks',
  'woodgrove',
] as const;

/** `José Müller` -> `jose.muller`: what a mail system would make of the name. */
export function emailLocalPart(given: string, family: string): string {
  const ascii = (s: string) =>
    s
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '');
  return `${ascii(given)}.${ascii(family)}`;
}

/**
 * The `index`-th distinct (given, family) pair. For a fixed given name, the family name walks
 * through every family name before any pair repeats; past every pair, a number is appended so
 * work emails stay unique.
 */
export function nameAt(index: number, givenOffset: number, familyOffset: number): { given: string; family: string; suffix: string } {
  const g = GIVEN_NAMES.length;
  const f = FAMILY_NAMES.length;
  const round = Math.floor(index / (g * f));
  const i = index % (g * f);
  const gi = i % g;
  const fi = (Math.floor(i / g) + gi * 7) % f;
  return {
    given: GIVEN_NAMES[(gi + givenOffset) % g] as string,
    family: FAMILY_NAMES[(fi + familyOffset) % f] as string,
    suffix: round === 0 ? '' : String(round + 1),
  };
}
