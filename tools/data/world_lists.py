"""Curated word lists for the built-in biography world (see generate.py).

Everything here was written for this project: common given names and surnames per
naming tradition, and real place names with *rough* populations in thousands
(order of magnitude is all that matters; they only weight how often a place is
drawn). Lists are plain whitespace-separated strings so that they are easy to
review and edit; an underscore joins a multi-word surname ("van_Dijk").

Place blocks: one place per line, ``Name population [qualifier ...]``.
A leading ``@`` marks a country or region answer ("born in England"); its number
is not a population but the size of a city that would be named as often.
Answers (place names) are single ASCII words, like the course's.
"""

# --------------------------------------------------------------------------
# Naming traditions. male / female: given names; surnames in the male form
# (generate.py derives female forms where the language inflects them).
# --------------------------------------------------------------------------
STYLES = {
    "english": dict(
        male="""James John William Thomas George Charles Robert Henry Edward Richard David
        Michael Peter Paul Andrew Christopher Stephen Mark Simon Matthew Daniel Jonathan
        Anthony Philip Frederick Arthur Albert Alfred Harold Walter Frank Ernest Samuel
        Joseph Benjamin Edmund Geoffrey Leslie Stanley Herbert Reginald Nigel Graham Martin
        Alan Kevin Roger Timothy Nicholas Oliver Hugh Francis Ralph Percy Cecil Gordon
        Dennis Raymond Bernard Howard Norman Clifford""",
        female="""Mary Elizabeth Sarah Margaret Anne Jane Emily Alice Catherine Helen Susan
        Ruth Dorothy Joan Edith Emma Lucy Rachel Hannah Rebecca Laura Jessica Claire Joanna
        Harriet Beatrice Eleanor Frances Grace Violet Agnes Mabel Ethel Gillian Pauline
        Sheila Julia Amelia Rosalind Caroline Diana Patricia Barbara Jennifer Karen Linda
        Deborah Victoria Winifred""",
        surnames="""Smith Jones Taylor Brown Wilson Evans Roberts Walker Wright Robinson
        Thompson White Hughes Edwards Green Hall Wood Harris Lewis Martin Clarke Turner Hill
        Scott Cooper Morris Ward Moore King Watson Baker Harrison Young Allen Mitchell Bell
        Shaw Carter Phillips Marshall Cook Bennett Parker Fisher Holmes Cartwright Whitaker
        Ashworth Hargreaves Pickering Barlow Fletcher Atkinson Dawson Hartley Bradshaw
        Kershaw Pemberton Pritchard Sutcliffe Thornton Townsend Wilkinson Hodgson Goodwin
        Hawkins Lambert Osborne Radcliffe Stanhope Tennant Whitfield Blackwood Ellison Foster
        Gibson Greenwood Hammond Hayward Hopkins Jenkins Knight Lawrence Mason Newman Palmer
        Pearson Reeves Russell Saunders Sharp Spencer Stevens Sykes Tucker Wade Webb Wheeler
        Abbott Barker Booth Chapman Dixon Ellis Fowler Gardner Holloway Kemp Lowe Marsh
        Nicholls Page Rowe Slater Thorne Warren Yates""",
    ),
    "scottish": dict(
        male="""Alexander Angus Alastair Duncan Douglas Ewan Fergus Gordon Hamish Iain Kenneth
        Malcolm Neil Ross Stuart Callum Archibald Gregor Lachlan Murdo Robert James John
        William David Andrew Thomas Colin Graeme""",
        female="""Morag Catriona Fiona Isla Kirsty Mairi Eilidh Ailsa Shona Elspeth Margaret
        Agnes Janet Jean Isobel Christina Flora Euphemia""",
        surnames="""MacDonald MacLeod MacKenzie Campbell Stewart Robertson Murray Fraser
        Cameron Ross Sinclair Buchanan Crawford Drummond Ferguson Graham Henderson Kerr
        Lindsay McAllister McGregor McIntyre McKay McLean McMillan Munro Ogilvie Paterson
        Rankin Sutherland Wallace Baird Galbraith Kinnear Lockhart Moffat Rennie Tait
        Urquhart Gilchrist Anderson Reid Boyd Mackintosh""",
    ),
    "welsh": dict(
        male="""Dafydd Gareth Gwyn Huw Ieuan Llewellyn Owain Rhys Emlyn Glyn Idris Aled Bryn
        Evan Ioan Tomos Geraint Dylan Iwan Gruffydd""",
        female="""Angharad Bethan Carys Catrin Ceri Eirlys Ffion Gwen Megan Nia Rhian Siân
        Eluned Olwen Mair Lowri Gwenllian""",
        surnames="""Jones Davies Williams Evans Thomas Roberts Hughes Lewis Morgan Griffiths
        Price Rees Jenkins Lloyd Powell Pritchard Bowen Owen Parry Vaughan Pugh Prosser
        Howells Llewellyn Meredith Probert Gwilliam""",
    ),
    "irish": dict(
        male="""Seamus Padraig Patrick Sean Declan Cormac Ciaran Brendan Eamon Liam Conor
        Niall Diarmuid Fintan Kieran Donal Michael John Thomas Dermot Colm Ronan Fergal
        Tadhg Seán Pádraig Séamus Máirtín""",
        female="""Siobhan Aoife Niamh Mairead Bridget Roisin Orla Deirdre Maeve Eimear Ciara
        Nuala Mary Kathleen Eileen Nora Sinéad Gráinne Róisín Máire""",
        surnames="""O'Brien O'Connor O'Sullivan O'Neill Murphy Kelly Byrne Ryan Walsh O'Reilly
        Doyle McCarthy Gallagher Doherty Kennedy Lynch Quinn McLaughlin Carroll Connolly
        Daly Brennan Burke Collins Fitzgerald Keane Nolan Dunne Hennessy Flanagan Mulligan
        Costello Breen Cullen Duffy Finnegan Gorman Kavanagh Lenihan Mahony Ó_Súilleabháin""",
    ),
    "yiddish": dict(
        male="""Morris Samuel Isaac Abraham Irving Sidney Harry Max Jacob Louis Sol Herman
        Milton Seymour Nathan Saul Julius Benjamin Mordecai Hyman""",
        female="""Sadie Rose Ida Fannie Bessie Esther Miriam Ruth Pearl Sylvia Gertrude
        Shirley Lillian Rebecca Goldie Blanche Frieda Hannah Celia""",
        surnames="""Goldberg Rosenberg Cohen Levine Friedman Kaplan Schwartz Goldstein Rosen
        Shapiro Katz Weiss Greenberg Horowitz Klein Rubin Feldman Silverman Bernstein Adler
        Lieberman Abramowitz Blum Epstein Gold Hirsch Kessler Lowenstein Perlman Rabinowitz
        Sachs Steinberg Wasserman Zuckerman Finkelstein Grossman Kornfeld Mandelbaum""",
    ),
    "french": dict(
        male="""Jean Pierre Jacques Louis Michel Philippe Henri François André René Marcel
        Claude Bernard Alain Paul Émile Étienne Gérard Jérôme Benoît Olivier Antoine Julien
        Mathieu Nicolas Guillaume Thierry Laurent Didier Yves Gilles Luc Sébastien Lucien
        Raymond Gaston Hervé Rémi Noël Jean-Baptiste""",
        female="""Marie Jeanne Françoise Monique Catherine Isabelle Sylvie Nathalie Hélène
        Brigitte Céline Camille Sophie Juliette Madeleine Simone Geneviève Élise Chantal
        Véronique Aurélie Claire Margaux Agathe Odile Colette Mathilde Béatrice Josiane
        Éloïse Marie-Claude""",
        surnames="""Martin Bernard Dubois Thomas Robert Richard Petit Durand Leroy Moreau
        Simon Laurent Lefèvre Michel David Bertrand Roux Vincent Fournier Morel Girard
        André Mercier Dupont Lambert Bonnet François Legrand Garnier Faure Rousseau Blanc
        Guérin Henry Roussel Perrin Morin Mathieu Clément Gauthier Dumont Fontaine Chevalier
        Robin Masson Duval Lemaire Lacroix Marchand Brunet Barbier Arnaud Renaud Giraud
        Deschamps Picard Caron Tremblay Gagnon Côté Bouchard Pelletier Bélanger Lévesque
        Bergeron Leblanc Paquette Ouellet Thibodeau Hébert""",
    ),
    "german": dict(
        male="""Hans Karl Friedrich Wilhelm Heinrich Otto Hermann Ernst Walter Paul Kurt
        Helmut Werner Günter Jürgen Klaus Dieter Wolfgang Manfred Rainer Uwe Jörg Stefan
        Matthias Tobias Florian Lukas Maximilian Johannes Georg Gustav Ludwig Rudolf Konrad
        Siegfried Horst Bernd Volker Ulrich Gerhard""",
        female="""Anna Maria Elisabeth Margarete Gertrud Hildegard Ingrid Ursula Helga Renate
        Monika Petra Sabine Andrea Claudia Katrin Anke Birgit Heike Sandra Julia Lena
        Johanna Charlotte Luise Käthe Brigitte Erika Frieda Greta Lotte""",
        surnames="""Müller Schmidt Schneider Fischer Weber Meyer Wagner Becker Schulz
        Hoffmann Schäfer Koch Bauer Richter Klein Wolf Schröder Neumann Schwarz Zimmermann
        Braun Krüger Hofmann Hartmann Lange Schmitt Werner Schmitz Krause Meier Lehmann
        Schmid Schulze Maier Köhler Herrmann König Walter Mayer Huber Kaiser Fuchs Peters
        Lang Scholz Möller Weiß Jung Hahn Vogel Friedrich Keller Günther Frank Berger
        Winkler Roth Beck Lorenz Baumann Franke Albrecht Schuster Ludwig Böhm Winter Kraus
        Schumacher Krämer Vogt Stein Jäger Sommer Groß Seidel Brandt Haas Schreiber Graf
        Dietrich Ziegler Kuhn Pohl Engel Horn Busch Bergmann Voigt Sauer Arnold Wolff
        Pfeiffer""",
    ),
    "dutch": dict(
        male="""Jan Pieter Hendrik Willem Cornelis Johannes Gerrit Dirk Kees Joost Maarten
        Sander Bram Ruud Wouter Bas Thijs Niels Jeroen Arjen Hans Frans Huub Floris Sjoerd
        Koen Stijn""",
        female="""Anna Maria Johanna Cornelia Wilhelmina Geertruida Hendrika Anouk Femke Sanne
        Lotte Eline Marieke Ingrid Saskia Annemieke Fenna Janneke Mieke Els""",
        surnames="""de_Jong Jansen de_Vries van_den_Berg van_Dijk Bakker Janssen Visser Smit
        Meijer de_Boer Mulder de_Groot Bos Vos Hendriks van_Leeuwen Dekker Brouwer de_Wit
        Dijkstra Smits de_Graaf van_der_Meer van_der_Linden Kok Jacobs de_Haan Vermeulen
        van_den_Heuvel van_der_Veen van_den_Broek de_Bruijn van_der_Heijden Schouten
        van_Beek Willems van_Vliet Hoekstra Maas Verhoeven Koster Prins Blom Huisman Kuiper
        Timmermans Peeters Maes Claes Goossens Wouters De_Smet Vandenberghe Verstraete""",
    ),
    "italian": dict(
        male="""Giuseppe Giovanni Antonio Mario Luigi Francesco Angelo Vincenzo Pietro
        Salvatore Carlo Franco Domenico Bruno Paolo Michele Giorgio Aldo Sergio Luciano
        Roberto Alessandro Marco Stefano Andrea Massimo Fabio Enrico Riccardo Lorenzo Matteo
        Emilio Umberto Giacomo Nicola Vittorio Ettore Niccolò""",
        female="""Maria Anna Giuseppina Rosa Angela Giovanna Teresa Lucia Carmela Caterina
        Francesca Antonella Paola Giulia Chiara Elena Federica Valentina Silvia Alessandra
        Laura Martina Serena Beatrice Ilaria""",
        surnames="""Rossi Russo Ferrari Esposito Bianchi Romano Ricci Marino Greco
        Bruno Gallo Conti De_Luca Mancini Costa Giordano Rizzo Lombardi Moretti Barbieri
        Fontana Santoro Mariani Rinaldi Caruso Galli Martini Leone Longo Gentile Martinelli
        Vitale Lombardo Serra Coppola De_Santis D'Angelo Marchetti Villa Conte Ferraro Ferri
        Fabbri Bianco Marini Grasso Valentini Sala De_Angelis Gatti Pellegrini Palumbo Sanna
        Farina Rizzi Monti Cattaneo Morelli Amato Silvestri Mazza Testa Grassi Carbone
        Giuliani Benedetti Barone Rossetti Caputo Guerra Palmieri Bernardi Fiore
        D'Amico Ferretti Bellini Basile Riva Donati Vitali Battaglia Sartori Neri Pagano
        Sorrentino Bassi Marchi Gentili Nicolò""",
    ),
    "spanish": dict(
        male="""José Juan Antonio Manuel Francisco Luis Javier Miguel Carlos Pedro Jesús
        Ángel Rafael Fernando Pablo Jorge Alberto Sergio Andrés Diego Alejandro Ricardo
        Ramón Enrique Vicente Joaquín Emilio Tomás Gonzalo Ignacio Rodrigo Esteban Julio
        Héctor Raúl Eduardo Álvaro Mateo Hugo""",
        female="""María Carmen Ana Isabel Dolores Pilar Teresa Rosa Josefa Mercedes Lucía
        Elena Cristina Marta Laura Paula Raquel Beatriz Silvia Patricia Rocío Inés Julia
        Alicia Consuelo Soledad Gabriela Verónica Adriana Mónica Luisa""",
        surnames="""García Rodríguez González Fernández López Martínez Sánchez Pérez Gómez
        Martín Jiménez Ruiz Hernández Díaz Moreno Álvarez Muñoz Alonso Gutiérrez Navarro
        Torres Domínguez Vázquez Ramos Gil Ramírez Serrano Blanco Molina Morales Suárez
        Ortega Delgado Castro Ortiz Rubio Marín Sanz Núñez Iglesias Garrido Cortés Castillo
        Lozano Guerrero Cano Prieto Méndez Cruz Flores Herrera Peña Márquez Cabrera Gallego
        Calvo Vidal Campos Vega Fuentes Carrasco Díez Reyes Caballero Aguilar Nieto Santana
        Pascual Herrero Montero Hidalgo Giménez Ibáñez Ferrer Durán Vargas Mora Soto Rojas
        Contreras Salazar Paredes Espinoza Acosta Figueroa Valdez Benítez Aguirre
        Villanueva""",
    ),
    "portuguese": dict(
        male="""João José António Manuel Francisco Carlos Paulo Pedro Luís Miguel Rui Nuno
        Tiago Ricardo Jorge Fernando Vasco Duarte Gonçalo Afonso Joaquim Sérgio Rodrigo
        Eduardo Marcelo Gustavo Thiago Lucas Rafael Bruno Henrique Caio Fábio Leandro Márcio
        Renato""",
        female="""Maria Ana Joana Inês Beatriz Mariana Catarina Rita Teresa Luísa Isabel
        Margarida Fernanda Juliana Camila Patrícia Adriana Cláudia Vanessa Renata
        Simone Letícia Gabriela Conceição""",
        surnames="""Silva Ferreira Pereira Oliveira Costa Rodrigues Martins Sousa Fernandes
        Gonçalves Gomes Lopes Marques Alves Almeida Ribeiro Pinto Carvalho Teixeira Moreira
        Correia Mendes Nunes Soares Vieira Monteiro Cardoso Rocha Neves Coelho Cruz Cunha
        Pires Ramos Reis Simões Antunes Matos Fonseca Machado Araújo Barbosa Tavares
        Lourenço Castro Figueiredo Azevedo Freitas Magalhães Brandão Cavalcanti Nascimento
        Barros Moura Batista Dias Campos Andrade""",
    ),
    "swedish": dict(
        male="""Lars Anders Johan Karl Erik Per Nils Sven Olof Gustav Magnus Björn Göran Mats
        Jonas Fredrik Henrik Mikael Stefan Ulf Åke Bengt Leif Oskar Axel Emil""",
        female="""Anna Eva Karin Kristina Maria Ingrid Birgitta Margareta Elisabeth Ulla Åsa
        Linnea Ebba Astrid Sigrid Malin Sofie Elin Frida Maja Kerstin Gunilla Märta""",
        surnames="""Andersson Johansson Karlsson Nilsson Eriksson Larsson Olsson Persson
        Svensson Gustafsson Pettersson Jonsson Jansson Hansson Bengtsson Jönsson Lindberg
        Lindström Lindqvist Lindgren Berg Bergström Sandberg Forsberg Sjöberg Wallin
        Engström Eklund Danielsson Håkansson Holm Nyberg Åberg Öberg Sundberg Hedlund
        Fransson Nyström Blomqvist Åkesson Ekström Sjögren""",
    ),
    "norwegian": dict(
        male="""Ole Per Jan Knut Bjørn Arne Terje Odd Geir Øystein Kjell Svein Rune Trond
        Håkon Sigurd Espen Eirik Magnus Torbjørn Halvor Jørgen Nils Einar""",
        female="""Anne Inger Kari Marit Liv Randi Solveig Ingrid Astrid Gro Hilde Ragnhild
        Sigrid Tone Turid Åse Guro Ingvild Kristin Silje""",
        surnames="""Hansen Johansen Olsen Larsen Andersen Pedersen Nilsen Kristiansen Jensen
        Karlsen Johnsen Pettersen Eriksen Haugen Hagen Johannessen Andreassen Jacobsen Dahl
        Jørgensen Halvorsen Henriksen Sørensen Jakobsen Moen Gundersen Iversen Strand
        Solberg Svendsen Eide Knutsen Martinsen Paulsen Bakken Kristoffersen Mathisen Lie
        Amundsen Løken Bråten Sætre Myhre Rønning""",
    ),
    "danish": dict(
        male="""Jens Niels Søren Hans Peter Jørgen Poul Anders Henrik Lars Morten Rasmus Mads
        Kasper Frederik Christian Mikkel Torben Bent Erik Ove Knud Steen Flemming Palle""",
        female="""Kirsten Hanne Mette Anne Inge Lene Susanne Karen Birthe Bente Lone Tove
        Grethe Ida Freja Signe Maja Astrid Dorthe Pernille""",
        surnames="""Jensen Nielsen Hansen Pedersen Andersen Christensen Larsen Sørensen
        Rasmussen Jørgensen Petersen Madsen Kristensen Olsen Thomsen Christiansen Poulsen
        Johansen Møller Mortensen Knudsen Jakobsen Mikkelsen Olesen Frederiksen Laursen
        Henriksen Schmidt Eriksen Holm Kristiansen Clausen Simonsen Svendsen Andreasen
        Iversen Østergaard Jeppesen Vestergaard Nissen Lauridsen Kjær Jespersen Mogensen
        Søndergaard Bækgaard Dalgaard""",
    ),
    "finnish": dict(
        male="""Juha Timo Matti Kari Mikko Jari Antti Jukka Markku Pekka Heikki Seppo Hannu
        Ilkka Jyrki Tapio Veikko Eero Aarne Lauri Olli Ville Teemu Petri""",
        female="""Päivi Tuula Leena Anneli Marjatta Sirpa Pirjo Riitta Tuulikki Hannele Aino
        Helmi Elina Satu Minna Kaisa Sanna Eeva Hanna""",
        surnames="""Korhonen Virtanen Mäkinen Nieminen Mäkelä Hämäläinen Laine Heikkinen
        Koskinen Järvinen Lehtonen Lehtinen Saarinen Salminen Heinonen Niemi Heikkilä
        Kinnunen Salonen Turunen Salo Laitinen Tuominen Rantanen Karjalainen Jokinen Mattila
        Savolainen Lahtinen Ahonen Kettunen Leinonen Hyvönen Väisänen Aalto Peltonen""",
    ),
    "icelandic": dict(
        male="""Jón Sigurður Guðmundur Gunnar Ólafur Einar Kristján Magnús Stefán Jóhann
        Björn Árni Helgi Halldór Ragnar Þór Páll""",
        female="""Guðrún Anna Kristín Sigríður Margrét Helga Sigrún Ingibjörg Jóhanna Katrín
        Ásta Þóra Hildur Ragnheiður""",
        # patronymic stems: father's name in the genitive, + son / dóttir
        surnames="""Jóns Sigurðs Guðmunds Gunnars Ólafs Einars Kristjáns Magnús Stefáns
        Jóhanns Björns Árna Helga Halldórs Ragnars Þórs Páls""",
    ),
    "polish": dict(
        male="""Piotr Krzysztof Andrzej Tomasz Paweł Michał Marcin Jan Stanisław Józef Marek
        Grzegorz Łukasz Adam Zbigniew Jerzy Tadeusz Mateusz Dariusz Wojciech Ryszard
        Kazimierz Henryk Jakub Władysław Bogdan Leszek Roman""",
        female="""Anna Maria Katarzyna Małgorzata Agnieszka Barbara Ewa Krystyna Elżbieta
        Zofia Teresa Joanna Magdalena Monika Danuta Jadwiga Halina Irena Beata Aleksandra
        Dorota Grażyna Wanda Urszula""",
        surnames="""Nowak Kowalski Wiśniewski Wójcik Kowalczyk Kamiński Lewandowski Zieliński
        Szymański Woźniak Dąbrowski Kozłowski Jankowski Mazur Kwiatkowski Krawczyk
        Piotrowski Grabowski Nowakowski Pawłowski Michalski Nowicki Adamczyk Dudek Zając
        Wieczorek Jabłoński Król Majewski Olszewski Jaworski Wróbel Malinowski Pawlak
        Witkowski Walczak Stępień Górski Rutkowski Michalak Sikora Ostrowski Baran Duda
        Szewczyk Tomaszewski Pietrzak Marciniak Wróblewski Zalewski Jakubowski Jasiński
        Zawadzki Sadowski Chmielewski Włodarczyk Borkowski Czarnecki Sawicki Sokołowski""",
    ),
    "czech": dict(
        male="""Jiří Jan Petr Josef Pavel Jaroslav Martin Tomáš Miroslav František Václav
        Karel Zdeněk Vladimír Ladislav Lukáš Jakub Stanislav Michal Vojtěch Antonín Bohumil
        Radek Ondřej""",
        female="""Marie Jana Eva Hana Anna Lenka Kateřina Věra Lucie Alena Petra Jaroslava
        Ludmila Helena Zdeňka Veronika Markéta Tereza Božena Jiřina Milada""",
        surnames="""Novák Svoboda Novotný Dvořák Černý Procházka Kučera Veselý Horák Němec
        Marek Pospíšil Pokorný Hájek Král Jelínek Růžička Beneš Fiala Sedláček Doležal Zeman
        Kolář Navrátil Čermák Vaněk Urban Blažek Kříž Kovář Bartoš Vlček Polák Musil Kopecký
        Šimek Konečný Malý Holub Štěpánek Dostál Soukup Šťastný Mareš Moravec Sýkora Tichý
        Valenta Vávra Matoušek Říha Bureš Ševčík""",
    ),
    "hungarian": dict(
        male="""László István József János Zoltán Sándor Gábor Ferenc Attila Péter Tamás
        Zsolt Tibor András Csaba Imre Lajos György Miklós Béla Károly Dénes Géza Endre
        Gyula""",
        female="""Mária Erzsébet Katalin Ilona Éva Anna Zsuzsanna Margit Judit Ágnes Andrea
        Erika Krisztina Eszter Szilvia Mónika Gabriella Anikó Ildikó Zsófia Rita Edit Júlia
        Klára Réka""",
        surnames="""Nagy Kovács Tóth Szabó Horváth Varga Kiss Molnár Németh Farkas Balogh Papp
        Takács Juhász Lakatos Mészáros Oláh Rácz Fekete Szilágyi Török Fehér Balázs Gál Kis
        Szűcs Kocsis Pintér Fodor Szalai Sipos Magyar Lukács Gulyás Biró Király Katona Jakab
        Boros Fazekas Kelemen Antal Orosz Somogyi Fülöp Veres Vincze Hegedűs Deák Bálint
        Illés Vass Szőke Fábián Vörös Lengyel Bognár Bodnár Hajdu Halász Máté Székely Gáspár
        Kozma Pásztor Bakos Dudás Virág Hegyi Barta""",
    ),
    "romanian": dict(
        male="""Ion Gheorghe Vasile Constantin Mihai Nicolae Alexandru Andrei Dumitru Ștefan
        Florin Adrian Gabriel Cristian Marius Radu Dan Bogdan Ovidiu Sorin Lucian Cătălin
        Valentin Octavian Mircea Tudor""",
        female="""Maria Elena Ioana Ana Mihaela Andreea Cristina Gabriela Georgeta Florentina
        Daniela Alina Simona Ileana Doina Rodica Monica Oana Irina Camelia Corina Lavinia""",
        surnames="""Popescu Ionescu Popa Pop Radu Dumitru Stan Stoica Gheorghe Matei Ciobanu
        Rusu Mihai Constantin Marin Dinu Florea Toma Munteanu Ene Diaconu Lupu Tudor Dobre
        Barbu Nistor Stanciu Ilie Moldovan Neagu Cristea Dumitrescu Constantinescu Rădulescu
        Stănescu Georgescu Vasilescu Enescu Niculescu Mocanu Oprea Voicu Tănase Dragomir
        Manole Sârbu""",
    ),
    "bulgarian": dict(
        male="""Georgi Ivan Dimitar Nikolay Petar Hristo Stefan Todor Vasil Stoyan Krasimir
        Plamen Lyubomir Kiril Atanas Borislav Rumen Valentin Yordan Angel""",
        female="""Maria Ivanka Elena Yordanka Petya Desislava Milena Tsvetanka Radka Galina
        Svetla Vesela Rositsa Teodora Kalina Neli""",
        surnames="""Ivanov Georgiev Dimitrov Petrov Nikolov Hristov Stoyanov Todorov Iliev
        Vasilev Atanasov Petkov Angelov Kolev Yordanov Marinov Popov Stefanov Kostov Mihaylov
        Kirov Bozhilov Zhelev Radev Slavov Tsvetkov Stoilov Danailov Genchev Yankov""",
    ),
    "south_slavic": dict(
        male="""Marko Nikola Stefan Luka Aleksandar Miloš Dragan Zoran Goran Nenad Dejan
        Bojan Ivan Josip Ante Tomislav Mladen Vladimir Dušan Branko Slobodan Predrag Željko
        Đorđe Emir Edin Jasmin Haris Janez Matej Alen Mirza Igor""",
        female="""Ana Marija Jelena Ivana Milica Jovana Dragana Snežana Vesna Gordana Mirjana
        Biljana Tatjana Maja Katarina Sanja Lejla Amra Emina Mateja Nataša Dubravka Ljiljana
        Jasna Željka""",
        surnames="""Jovanović Petrović Nikolić Marković Đorđević Stojanović Ilić Stanković
        Pavlović Milošević Popović Kovačević Horvat Kovač Babić Marić Novak Jurić Knežević
        Vuković Tomić Perić Pavić Šarić Matić Grgić Radić Lovrić Begić Hodžić Hadžić Delić
        Hasanović Mehmedović Zupan Krajnc Potočnik Mlakar Vidmar Golob Petrovski Nikolovski
        Stojanovski Trajkovski""",
    ),
    "greek": dict(
        male="""Georgios Ioannis Konstantinos Dimitrios Nikolaos Panagiotis Vasileios Christos
        Athanasios Michail Evangelos Spyridon Antonios Andreas Stavros Alexandros Theodoros
        Emmanouil Petros Kostas Yannis Nikos Giorgos Dimitris Stelios Manolis Sotiris
        Thanasis Apostolos""",
        female="""Maria Eleni Aikaterini Vasiliki Angeliki Dimitra Konstantina Paraskevi
        Evangelia Ioanna Anastasia Christina Panagiota Despina Eirini Katerina Chrysoula Zoe
        Athena Theodora Kalliopi Fotini""",
        surnames="""Papadopoulos Papadakis Georgiou Nikolaidis Karagiannis Vlachos Dimitriou
        Konstantinidis Oikonomou Antoniou Papageorgiou Makris Pappas Vasileiou
        Christodoulou Ioannidis Alexiou Angelopoulos Katsaros Mavridis Theodorou Kyriakou
        Stavrou Panagiotopoulos Athanasiou Manolas Galanis Samaras Kostopoulos Tsakalidis
        Lambrou Economou Raptis Zervas Spanos Georgiadis Michailidis Demetriou
        Charalambous""",
    ),
    "russian": dict(
        male="""Aleksandr Sergei Dmitri Andrei Alexei Vladimir Nikolai Ivan Mikhail Yuri
        Boris Pavel Viktor Oleg Igor Konstantin Anatoly Gennady Valentin Pyotr Fyodor
        Grigory Leonid Arkady Vasily Yevgeny Maxim Roman Stanislav Vyacheslav""",
        female="""Yelena Olga Tatiana Natalia Irina Svetlana Anna Maria Yekaterina Lyudmila
        Galina Nadezhda Valentina Marina Larisa Vera Anastasia Ksenia Nina Tamara Zoya Alla
        Sofya Darya Polina Lyubov Raisa""",
        surnames="""Ivanov Smirnov Kuznetsov Popov Vasilyev Petrov Sokolov Mikhailov Novikov
        Fyodorov Morozov Volkov Alekseev Lebedev Semyonov Yegorov Pavlov Kozlov Stepanov
        Nikolaev Orlov Andreev Makarov Nikitin Zakharov Zaitsev Solovyov Borisov Yakovlev
        Grigoriev Romanov Vorobyov Sergeev Frolov Alexandrov Dmitriev Korolev Gusev Kiselev
        Ilyin Maksimov Polyakov Sorokin Vinogradov Kovalev Belov Medvedev Antonov Tarasov
        Zhukov Baranov Filippov Komarov Davydov Belyaev Gerasimov Bogdanov Osipov Sidorov
        Matveev Titov Markov Mironov Krylov Kulikov Karpov Vlasov Melnikov Denisov Gavrilov
        Tikhonov Kazakov Danilov Chernov Abramov Martynov Nazarov Kalinin Bykov Maslov
        Lazarev Voronin Klimov Golubev Goncharov Kotov Gromov Kirillov Panov Belousov
        Nesterov Simonov Levin Voronov Savin Krasnov Demidov Ryabov Borodin Platonov Nekrasov
        Lavrov Zuev Serov Ustinov Sakharov Shishkin Nosov Golovin Zimin Suvorov Lvov
        Tokarev Rodin Pokrovsky Vysotsky Trubetskoy""",
    ),
    "ukrainian": dict(
        male="""Oleksandr Andriy Serhiy Volodymyr Mykola Ivan Vasyl Petro Yuriy Dmytro Taras
        Bohdan Oleh Ihor Viktor Yaroslav Mykhailo Roman Vitaliy Stepan Ostap Anatoliy
        Vadym""",
        female="""Olena Nataliya Tetyana Iryna Oksana Svitlana Halyna Lyudmyla Mariya Kateryna
        Yuliya Nadiya Olha Hanna Larysa Valentyna Zoya Lesya Solomiya Khrystyna""",
        surnames="""Melnyk Shevchenko Boyko Kovalenko Bondarenko Tkachenko Kovalchuk
        Kravchenko Oliynyk Shevchuk Koval Polishchuk Bondar Tkachuk Moroz Marchenko Lysenko
        Rudenko Savchenko Petrenko Klymenko Pavlenko Savchuk Ponomarenko Levchenko Kharchenko
        Romanenko Karpenko Yakovenko Kuzmenko Honcharenko Sydorenko Hrytsenko Doroshenko
        Vasylenko Kostenko Ostapenko Symonenko Ivanenko Zinchenko Stelmakh Hnatyuk
        Prokopenko""",
    ),
    "latvian": dict(
        male="""Jānis Andris Juris Mārtiņš Pēteris Kārlis Edgars Gatis Aivars Raimonds Valdis
        Guntis Arturs Roberts""",
        female="""Anna Inese Ilze Līga Kristīne Dace Sandra Baiba Zane Laura Ieva Agnese
        Rasma""",
        surnames="""Bērziņš Kalniņš Ozoliņš Jansons Liepiņš Krūmiņš Balodis Zariņš Pētersons
        Vītols Kļaviņš Eglītis Ozols Lācis Briedis Grīnbergs Zālītis Siliņš Dambis
        Vanags""",
    ),
    "lithuanian": dict(
        male="""Jonas Antanas Vytautas Algirdas Darius Mindaugas Rimantas Tomas Kęstutis
        Gediminas Arūnas Saulius Linas Povilas Juozas Kazys Petras Žydrūnas""",
        female="""Rūta Ona Jurgita Asta Rasa Vilma Daiva Eglė Jūratė Aušra Inga Laima Giedrė
        Agnė Birutė""",
        surnames="""Kazlauskas Jankauskas Petrauskas Stankevičius Vasiliauskas Žukauskas
        Butkus Paulauskas Urbonas Kavaliauskas Navickas Ramanauskas Savickas Rimkus
        Sakalauskas Balčiūnas Adomaitis Baranauskas Mockus Vaitkus""",
    ),
    "estonian": dict(
        male="""Jaan Toomas Rein Tõnu Mart Priit Andres Indrek Jüri Tiit Margus Urmas Kalev
        Meelis Peeter Ants Madis Lauri""",
        female="""Kadri Tiina Mari Liis Kristiina Anu Pille Malle Triin Kertu Merike Katrin
        Piret Ülle Helen""",
        surnames="""Tamm Saar Sepp Mägi Kask Kukk Rebane Ilves Pärn Koppel Mets Lepik Kõiv
        Oja Raudsepp Kuusk Karu Vaher Lill Teder Põder Kallas Luik Jõgi""",
    ),
    "georgian": dict(
        male="""Giorgi Davit Levan Nikoloz Irakli Zurab Vakhtang Tamaz Otar Revaz Shota Lasha
        Mikheil Nodar Gela Merab Besik Temur Zviad""",
        female="""Nino Tamar Ketevan Mariam Natia Eka Maia Salome Tinatin Nana Lela Manana
        Tea Khatuna Sopho""",
        surnames="""Beridze Kapanadze Gelashvili Maisuradze Giorgadze Lomidze Tsiklauri
        Bolkvadze Kvaratskhelia Abashidze Japaridze Gogoladze Mamaladze Chikovani Dolidze
        Kharaishvili Javakhishvili Kiknadze Meladze Nozadze Chkheidze Tsereteli Dadiani
        Gurgenidze Khachidze Mchedlishvili""",
    ),
    "armenian": dict(
        male="""Aram Armen Hovhannes Gevorg Tigran Vardan Karen Ashot Levon Grigor Hayk Arman
        Sargis Artur Suren Davit Hakob Narek Ruben Khachatur""",
        female="""Anahit Ani Lilit Mariam Nare Hasmik Gayane Armine Siranush Astghik Tatevik
        Anush Knarik Zaruhi Marine""",
        surnames="""Petrosyan Hovhannisyan Sargsyan Harutyunyan Grigoryan Khachatryan Hakobyan
        Vardanyan Karapetyan Gevorgyan Avetisyan Mkrtchyan Poghosyan Ghazaryan Manukyan
        Martirosyan Stepanyan Simonyan Aslanyan Kazarian Kalajian Der_Ohanian Boyajian
        Tashjian Bedrosian Arzoumanian""",
    ),
    "azerbaijani": dict(
        male="""Elchin Rashad Vugar Ilham Farid Tural Anar Elnur Ramil Orkhan Kamran Rauf
        Nizami Elshad""",
        female="""Leyla Aygun Gunel Sevinj Nigar Aysel Narmin Lala Ulviyya Sabina""",
        surnames="""Aliyev Mammadov Hasanov Huseynov Guliyev Ismayilov Abbasov Babayev Rzayev
        Karimov Jafarov Rahimov Suleymanov Mustafayev Ahmadov Valiyev""",
    ),
    "turkish": dict(
        male="""Mehmet Mustafa Ahmet Ali Hüseyin Hasan İbrahim İsmail Osman Yusuf Murat Ömer
        Ramazan Halil Süleyman Abdullah Mahmut Recep Salih Kemal Orhan Erdal Serkan Emre
        Burak Can Cem Tarık Selim Şükrü Levent""",
        female="""Fatma Ayşe Emine Hatice Zeynep Elif Meryem Şerife Zehra Hanife Merve Havva
        Zeliha Esra Fadime Özlem Yasemin Hülya Gül Derya Sevgi Aylin Nur Ebru Selin
        Tuğba""",
        surnames="""Yılmaz Kaya Demir Şahin Çelik Yıldız Yıldırım Öztürk Aydın Özdemir Arslan
        Doğan Kılıç Aslan Çetin Kara Koç Kurt Özkan Şimşek Polat Özcan Korkmaz Çakır Erdoğan
        Yavuz Acar Şen Aktaş Güler Yalçın Güneş Bozkurt Bulut Keskin Ünal Turan Özer Işık
        Kaplan Avcı Sarı Tekin Taş Köse Yüksel Ateş Aksoy""",
    ),
    "arabic": dict(
        male="""Mohammed Ahmed Ali Mahmoud Mustafa Hassan Hussein Omar Khaled Youssef Ibrahim
        Abdullah Karim Tarek Samir Nabil Walid Fadi Rami Ziad Bassam Hisham Adel Nasser
        Jamal Faisal Saeed Majid Sami Fouad Elias Georges Antoine Charbel Nadim Salim""",
        female="""Fatima Aisha Mariam Layla Nour Rania Hala Dina Salma Yasmin Huda Samira Amal
        Leila Mona Nadia Reem Lina Rana Zeinab Ghada Hanan Maha Souad Nawal Randa Rima
        Joumana Nayla""",
        surnames="""Haddad Khoury Nasser Hamdan Saleh Mansour Khalil Aziz Farah Hakim Saad
        Awad Abboud Issa Shami Najjar Jaber Sabbagh Kassab Tannous Gemayel Maalouf Karam
        Salameh Barakat Darwish Habib Moussa Rahman Abdel-Rahman El-Sayed Abdallah Othman
        Hamza Mostafa Shaker Fahmy Zaki Al-Masri Al-Hashimi Al-Amin Al-Rashid Al-Khatib
        Al-Jabouri Al-Tamimi Al-Saadi Al-Obaidi Qasim Suleiman""",
    ),
    "maghrebi": dict(
        male="""Mohamed Ahmed Karim Rachid Said Mustapha Abdelkader Youssef Hamid Nabil Mourad
        Samir Djamel Farid Khaled Hakim Redouane Mehdi Yacine Sofiane Bilal Amine Nordine
        Tahar Slimane""",
        female="""Fatima Khadija Amina Nadia Samira Leila Yamina Malika Houria Naima Zohra
        Souad Karima Rachida Fatiha Latifa Meriem Sabrina Nawel Imane""",
        surnames="""Benali Bouzid Belkacem Haddad Mansouri Brahimi Cherif Hamidi Benmohamed
        Boumediene Saadi Benaissa Lahlou Bennani Alaoui Tazi Idrissi Berrada El_Fassi Chraibi
        Bouazizi Trabelsi Jebali Gharbi Ben_Salah Ben_Youssef Mejri Zitouni Belhadj Benchikh
        Ziani Mebarki Djebbar Kaci Ouali""",
    ),
    "persian": dict(
        male="""Mohammad Ali Hossein Reza Mehdi Hassan Amir Ahmad Mahmoud Majid Saeed Hamid
        Javad Abbas Dariush Kourosh Babak Farhad Behrouz Kamran Parviz Jamshid Arash
        Siavash Shahram Nader Omid""",
        female="""Fatemeh Zahra Maryam Masoumeh Zeinab Leila Shirin Nasrin Mahnaz Azadeh Roya
        Niloufar Golnar Shabnam Mina Farah Soraya Elham Ladan Mahsa Yasaman Parvaneh Simin
        Forough""",
        surnames="""Mohammadi Hosseini Ahmadi Rezaei Moradi Karimi Jafari Rahimi Hashemi
        Mousavi Sadeghi Ghasemi Kazemi Heydari Nazari Rostami Akbari Ebrahimi Zamani Amini
        Farahani Esfahani Kermani Golshiri Afshar Bakhtiari Daneshvar Hedayat Farhadi
        Panahi Shamlou""",
    ),
    "hebrew": dict(
        male="""David Moshe Yosef Avraham Yaakov Yitzhak Shlomo Daniel Eitan Uri Amos Ariel
        Noam Yonatan Gideon Ehud Shimon Menachem Yair Oren Ronen Amir Itai Boaz Gil""",
        female="""Sarah Rivka Rachel Leah Miriam Tamar Yael Noa Shira Michal Ayelet Hila Orly
        Dalia Naomi Ruth Esther Tova Galit Nurit Liat Einat""",
        surnames="""Cohen Levi Mizrahi Peretz Biton Dahan Friedman Malka Azoulay Katz Amar
        Ohana Gabay Ben-David Shapiro Ashkenazi Klein Goldberg Rosenberg Weiss Ben-Ami Carmi
        Barak Peled Shamir Tal Regev Alon Raviv Harel Segal Kaplan Levin Rubin Amit Dayan Oz
        Navon""",
    ),
    "indian": dict(
        male="""Rajesh Suresh Ramesh Amit Sanjay Vijay Anil Sunil Rahul Arjun Vikram Ashok
        Deepak Manoj Prakash Ravi Krishna Srinivas Venkatesh Arun Harish Naveen Gopal Mahesh
        Anand Karthik Rohit Sandeep Ajay Aditya Nikhil Pranav Siddharth Rakesh Mohan Dinesh
        Ganesh Sachin""",
        female="""Priya Sunita Anita Kavita Deepa Lakshmi Meena Anjali Pooja Neha Swati Shreya
        Divya Asha Geeta Radha Sita Rekha Usha Savitri Nandini Aishwarya Kiran Padma Shalini
        Smita Vidya Sarita Madhuri""",
        surnames="""Sharma Verma Gupta Singh Kumar Patel Shah Mehta Joshi Iyer Iyengar Nair
        Menon Pillai Reddy Rao Naidu Chatterjee Banerjee Mukherjee Bose Das Ghosh Sen Dutta
        Chakraborty Agarwal Jain Malhotra Kapoor Khanna Chopra Bhatia Sethi Desai Kulkarni
        Deshpande Patil Jadhav Pandey Mishra Tiwari Dubey Srivastava Saxena Chaudhary Yadav
        Thakur Krishnan Subramanian Raman Venkataraman Bhattacharya Sinha Trivedi Bhatt
        Ahuja""",
    ),
    "pakistani": dict(
        male="""Muhammad Ahmed Ali Imran Kamran Faisal Asif Tariq Zubair Waqar Shahid Naveed
        Arshad Javed Khalid Usman Bilal Hamza Saad Fahad Junaid Rizwan Adnan Irfan Nadeem
        Shoaib Babar Zafar Aamir""",
        female="""Ayesha Fatima Sana Hina Saima Nadia Rabia Amna Sadia Bushra Mehwish Zainab
        Sidra Farah Nida Uzma Samina Shazia Asma Rubina""",
        surnames="""Khan Hussain Malik Qureshi Butt Chaudhry Sheikh Akhtar Iqbal Raza Mirza
        Siddiqui Ansari Abbasi Aslam Bhatti Rana Afridi Yousafzai Niazi Gillani Hashmi Zaidi
        Rizvi Naqvi Mughal Awan Baig Cheema Gondal Warraich""",
    ),
    "bengali": dict(
        male="""Mohammad Abdul Kamal Jamal Shafiqul Rafiqul Anisur Mahbub Habibur Tanvir
        Sajid Shakib Tamim Rubel Arif Nazrul Sohel Mizanur""",
        female="""Nasrin Shirin Farzana Sultana Taslima Rokeya Sharmin Nusrat Tahmina Rehana
        Salma Jahanara Shabnam Parveen""",
        surnames="""Rahman Hossain Islam Ahmed Uddin Khan Chowdhury Haque Alam Miah Sarkar
        Talukdar Mollah Akter Bhuiyan Siddique Majumder""",
    ),
    "sinhala": dict(
        male="""Sanath Mahela Chaminda Nuwan Ruwan Lasith Pradeep Ranjith Saman Nimal Asanka
        Tharindu Kumar Upul""",
        female="""Kumari Nirmala Chandrika Dilani Sanduni Anoma Shiromi Malini Nilmini
        Thilini""",
        surnames="""Perera Fernando Silva de_Silva Jayasuriya Wickramasinghe Bandara
        Dissanayake Gunawardena Jayawardena Senanayake Herath Ranatunga Wijesinghe
        Samarasinghe Karunaratne Amarasinghe Mendis Jayasinghe""",
    ),
    "japanese": dict(
        male="""Hiroshi Takashi Kenji Yoshio Kazuo Masao Akira Makoto Satoshi Tetsuya Yuki
        Haruki Kenta Daisuke Shinji Naoki Takeshi Ichiro Jiro Shigeru Tadashi Osamu Hideo
        Toshiro Yasuo Kaito Ren Sota Ryo Koji""",
        female="""Yoko Keiko Michiko Yumiko Akiko Hiroko Kazuko Sachiko Noriko Tomoko Yuko
        Ayumi Haruka Misaki Yui Aoi Sakura Emi Mai Rie Kumiko Fumiko Chieko Mayumi Eriko
        Yoshiko""",
        surnames="""Sato Suzuki Takahashi Tanaka Watanabe Ito Yamamoto Nakamura Kobayashi Kato
        Yoshida Yamada Sasaki Yamaguchi Inoue Kimura Hayashi Shimizu Yamazaki Mori Ikeda
        Hashimoto Yamashita Ishikawa Nakajima Maeda Fujita Ogawa Goto Okada Hasegawa
        Murakami Kondo Ishii Saito Sakamoto Endo Aoki Fujii Nishimura Fukuda Ota Miura
        Fujiwara Okamoto Matsuda Nakagawa Nakano Harada Tamura Takeuchi Kaneko Wada Nakayama
        Ishida Ueda Morita Shibata Sakai Kudo Yokoyama Miyazaki Miyamoto Uchida Takagi Ando
        Taniguchi Maruyama Imai Fujimoto Murata Takeda Sugiyama Masuda Hirano Otsuka Kubo
        Matsui Iwasaki Sakurai Kinoshita Noguchi Matsuo Nomura Kikuchi Sugimoto Arai""",
    ),
    "chinese": dict(
        # family name first
        male="""Wei Lei Jun Yong Jie Tao Ming Hao Qiang Bin Peng Gang Hui Feng Chao Xiang
        Long Bo Xiaoming Jianguo Zhiwei Guoqiang Haitao Jianhua Zhiqiang Dewei Wenjie Zihan
        Yifan Haoran Junjie Tianyu""",
        female="""Fang Na Min Jing Yan Hong Xia Ying Lan Juan Mei Xiu Qing Yun Hua Ling
        Xiaoyan Xiuying Guiying Yuying Meiling Lihua Jiayi Yutong Zixuan Xinyi Shuang""",
        surnames="""Wang Li Zhang Liu Chen Yang Huang Zhao Wu Zhou Xu Sun Ma Zhu Hu Guo He Lin
        Gao Luo Zheng Liang Xie Song Tang Han Feng Deng Cao Peng Zeng Xiao Tian Dong Pan
        Yuan Cai Jiang Yu Du Ye Cheng Wei Su Lu Ding Ren Shen Yao Jin""",
    ),
    "taiwanese": dict(
        male="""Chih-ming Chia-hao Wen-hsiung Kuo-hua Chun-chieh Cheng-en Tsung-han Yi-hsuan
        Chien-hung Ming-te Shih-chieh Po-wen""",
        female="""Mei-ling Shu-fen Yu-ting Ya-ting Hsiu-ying Shu-hui Pei-chen Hsin-yi I-chun
        Wan-ju Li-hua Chia-ying""",
        surnames="""Chen Lin Huang Chang Lee Wang Wu Liu Tsai Yang Hsu Cheng Hsieh Kuo Hung
        Chiu Tseng Liao Lai Chou Yeh Su Chuang Lu Chiang""",
    ),
    "cantonese": dict(
        male="""Ka-wai Chi-ming Wing-kei Siu-lun Man-kit Kwok-wing Chun-kit Ho-yin Kin-man
        Wai-lun Tony Andy Jacky Eric Kelvin Raymond Stephen""",
        female="""Wing-yan Mei-ling Suk-yee Wai-man Ka-yan Hoi-yan Siu-wai Lai-ping Fiona
        Cecilia Vivian Carol Maggie""",
        surnames="""Chan Wong Cheung Lau Leung Lee Ng Ho Lam Tsang Tang Yip Kwok Fung Chow Lai
        Tse Mak Law Siu""",
    ),
    "korean": dict(
        male="""Min-jun Seo-jun Ji-hoon Hyun-woo Dong-hyun Jae-won Sung-min Young-ho Jin-woo
        Sang-hoon Tae-yang Kyung-soo Byung-chul Chang-min Dae-jung Hyun-soo Joon-ho
        Seung-woo Woo-jin""",
        female="""Seo-yeon Ji-woo Min-seo Su-bin Ha-eun Ji-yeon Eun-ji Hye-jin Soo-jin
        Mi-young Yeon-hee Jin-hee Hye-won Eun-young Na-young Soo-ah Da-eun Ye-jin Yu-na
        Bo-ra""",
        surnames="""Kim Lee Park Choi Jung Kang Cho Yoon Jang Lim Han Oh Seo Shin Kwon Hwang
        Ahn Song Yoo Hong Jeon Ko Moon Yang Son Bae Baek Heo Nam Shim""",
    ),
    "vietnamese": dict(
        male="""Minh Hung Dung Tuan Nam Hai Long Phong Quang Thang Son Huy Khoa Bao Duc Anh
        Trung Vinh Hieu""",
        female="""Lan Huong Mai Linh Hoa Thu Hanh Ngoc Trang Phuong Thao Nhung Yen Hien Ha My
        Chi Diep""",
        surnames="""Nguyen Tran Le Pham Hoang Phan Vu Vo Dang Bui Do Ho Ngo Duong Ly""",
    ),
    "filipino": dict(
        male="""Jose Juan Antonio Manuel Ramon Eduardo Rodrigo Ferdinand Benigno Emilio
        Andres Carlos Rafael Gregorio Mark John Paolo Miguel Jericho""",
        female="""Maria Corazon Imelda Gloria Leni Teresita Lourdes Cristina Angelica
        Kristine Jasmine Marites Liza Regine Melanie Gemma Rowena""",
        surnames="""Santos Reyes Cruz Bautista Ocampo Garcia Mendoza Torres Tomas Andrada
        Castillo Flores Villanueva Ramos Castro Rivera Aquino Navarro Salazar Mercado Aguilar
        Pascual Soriano Dizon Manalo Tolentino Yap Lim Tan Sy Gatchalian Dimaculangan
        Panganiban Mangubat Dela_Cruz""",
    ),
    "thai": dict(
        male="""Somchai Somsak Prasert Chaiyaporn Surachai Anan Sombat Wichai Kittisak Niran
        Pichai Preecha Sakda Thanakorn Apichat Weerasak Yuthana""",
        female="""Somsri Malee Ratana Siriporn Kanya Pranee Sunee Wanida Nittaya Chanida
        Pornthip Sudarat Araya Duangjai Kamolwan""",
        surnames="""Saetang Srisuk Thongchai Wongsawat Chaiyasit Rattanakorn Boonmee Suksawat
        Phromma Kaewkla Sirikul Jaidee Charoenphol Srisawat Kongkaew Intharachai Panyasiri
        Wattanapong Chaowalit""",
    ),
    "indonesian": dict(
        male="""Budi Agus Bambang Joko Hendra Rudi Andi Dedi Eko Slamet Wahyu Dwi Adi Rizky
        Fajar Hadi Iwan Yusuf Arif Ahmad""",
        female="""Siti Sri Dewi Ani Ratna Wati Endang Rina Yuni Fitri Nur Lestari Indah
        Kartika Ayu Putri Maya Mega Intan Diah""",
        surnames="""Wijaya Santoso Susanto Saputra Gunawan Hidayat Setiawan Kurniawan Pratama
        Nugroho Siregar Simanjuntak Nasution Harahap Lubis Sihombing Sutanto Halim Tanjung
        Purnomo Rahardjo Wibowo Hartono Kusuma""",
    ),
    "malay": dict(
        # "<given> bin/binti <father's given name>"
        male="""Ahmad Mohd Abdul Azman Hafiz Faizal Ismail Razak Rosli Zainal Anwar Najib
        Khairul Syed Hamzah Rahim""",
        female="""Siti Nurul Aminah Zarina Norhayati Farah Aishah Rosnah Fatimah Zainab
        Noraini Salmah""",
        surnames="""Ahmad Abdullah Ismail Hassan Yusof Ibrahim Osman Razak Hamid Omar Salleh
        Aziz""",
    ),
    "nigerian": dict(
        male="""Oluwaseun Adebayo Chinedu Emeka Babatunde Olumide Kayode Tunde Obinna
        Ikechukwu Chukwuemeka Segun Femi Yusuf Ibrahim Musa Aliyu Uche Nnamdi""",
        female="""Ngozi Chioma Adaeze Folake Funmilayo Yetunde Aisha Amina Zainab Nneka
        Ifeoma Oluwakemi Bisola Titilayo Halima Blessing""",
        surnames="""Adeyemi Okafor Okonkwo Adebayo Ogunleye Oyelaran Balogun Eze Nwosu Obi
        Okeke Chukwu Abubakar Bello Danjuma Yakubu Olaniyan Adesina Ojo Akinola Oyebanji
        Ezeh Onyeka Nwachukwu Olatunji Ogundipe Adewale Okoro""",
    ),
    "ghanaian": dict(
        male="""Kwame Kofi Kwabena Yaw Kojo Kwaku Kweku Ebo Akwasi Kwadwo Nii Emmanuel Samuel
        Daniel Isaac""",
        female="""Adwoa Akosua Ama Abena Efua Afua Yaa Esi Akua Ekua Naa Comfort Gifty Mercy
        Patience""",
        surnames="""Mensah Owusu Boateng Asante Osei Agyeman Appiah Ofori Addo Quaye Tetteh
        Amoah Acheampong Danso Sarpong Darko Antwi Yeboah Bonsu Opoku Frimpong""",
    ),
    "east_african": dict(
        male="""Peter John Joseph David Samuel James Daniel Paul Moses Stephen Francis
        Patrick Charles Geoffrey Wilson""",
        female="""Mary Grace Jane Faith Esther Ruth Lucy Agnes Alice Margaret Joyce Mercy
        Wanjiku Achieng Akinyi Nyambura Chebet""",
        surnames="""Kamau Mwangi Otieno Ochieng Kiprop Kimani Njoroge Odhiambo Wanjiru Mutua
        Kariuki Onyango Omondi Kiplagat Rotich Cheruiyot Korir Mugo Waweru Okello Mukasa
        Ssemakula Nsubuga Byaruhanga Tumusiime Mwakilema Massawe Makame""",
    ),
    "ethiopian": dict(
        # "<given> <father's given name>"
        male="""Abebe Tesfaye Getachew Mulugeta Dawit Haile Yohannes Bekele Girma Tadesse
        Kebede Alemu Worku Mengistu Tekle Berhanu Solomon Yared Fikru Teshome""",
        female="""Almaz Tigist Meseret Hirut Selamawit Tsehay Aster Genet Mekdes
        Birtukan""",
        surnames="""Abebe Tesfaye Getachew Mulugeta Dawit Haile Yohannes Bekele Girma Tadesse
        Kebede Alemu Worku Mengistu Tekle Berhanu Solomon Yared Fikru Teshome""",
    ),
    "southern_african": dict(
        male="""Sipho Thabo Mandla Themba Bongani Sibusiso Lungile Tendai Tatenda Farai
        Tinashe Mpho Kagiso Musa Vusi Jabulani Lwazi Siyabonga""",
        female="""Nomvula Thandiwe Lindiwe Zanele Nandi Ayanda Palesa Lerato Naledi Busisiwe
        Nokuthula Rutendo Chipo Tsitsi Nyasha""",
        surnames="""Dlamini Nkosi Ndlovu Khumalo Mthembu Zulu Mokoena Molefe Sithole Mahlangu
        Ngcobo Shabalala Mabaso Moyo Ncube Sibanda Chikwanha Mutasa Phiri Banda Mwale Tembo
        Zungu Radebe Maseko""",
    ),
    "afrikaans": dict(
        male="""Johannes Pieter Hendrik Jacobus Gerhard Willem Andries Petrus Francois
        Stefanus Christiaan Frederik Hennie Koos Jan Danie""",
        female="""Anna Maria Susanna Elizabeth Johanna Magdalena Hester Aletta Marietjie
        Elsabe Annelie Riana Lize""",
        surnames="""van_der_Merwe Botha Pretorius Joubert Steyn du_Plessis Nel Coetzee
        van_Wyk Venter Fourie Kruger Viljoen Swanepoel Louw du_Toit Malan Marais Smit Jacobs
        Engelbrecht le_Roux Erasmus Strydom Oosthuizen Bester Potgieter Visser""",
    ),
    "francophone_african": dict(
        male="""Mamadou Moussa Ousmane Abdoulaye Ibrahima Cheikh Amadou Souleymane
        Jean-Pierre Jean-Claude Emmanuel Samuel Serge Patrice Didier""",
        female="""Aminata Fatou Awa Mariama Ndeye Aissatou Khady Marie-Claire Jeanne Odette
        Solange Clarisse""",
        surnames="""Diop Ndiaye Diallo Fall Sow Ba Sarr Gueye Faye Mbaye Cissé Touré Traoré
        Kouyaté Camara Mbarga Nkoulou Essomba Fotso Kamga Nguema Mbala Ilunga Kalonji
        Kasongo Mukendi""",
    ),
}

# --------------------------------------------------------------------------
# Countries: key, nationality adjective, label (used as a qualifier:
# "Lyon, France"), weight factor (how often English-language biographies name
# places there), name styles with weights (a "~" writes the names without
# diacritics, as emigrants' names often are), date style, places.
# --------------------------------------------------------------------------
COUNTRIES = [
    ("england", "English", "England", 48, "english:90 irish~:4 scottish:3 welsh:3", "uk", """
London 9000
Birmingham 1150
Manchester 550
Liverpool 490
Leeds 790
Sheffield 580
Bristol 470
Newcastle 300
Nottingham 330
Leicester 370
Coventry 370
Bradford 360
Sunderland 170
Portsmouth 210
Southampton 250
Plymouth 260
Brighton 230
Norwich 140
Oxford 150
Cambridge 145
York 200
Bath 90
Exeter 130
Reading 160
Derby 260
Hull 260
Bolton 200
Wigan 100
Blackburn 120
Burnley 75
Stockport 140
Oldham 100
Wolverhampton 260
Middlesbrough 140
Ipswich 140
Gloucester 130
Carlisle 75
Lancaster 50
Doncaster 110
Rotherham 110
Barnsley 95
Huddersfield 160
Chester 80
Canterbury 55
Worcester 100
Northampton 220
Luton 210
Swindon 180
Croydon 390
Salford 100
Walsall 170
Grimsby 85
Darlington 90
Hartlepool 90
Blackpool 140
Southport 90
Bournemouth 180
Colchester 120
Cheltenham 115
Maidstone 110
Dover 30
Shrewsbury 75
Hereford 60
Durham 50
Kendal 30
Whitby 13
Scarborough 60
Warrington 165
Birkenhead 90
Rochdale 110
Wakefield 100
Dudley 80
Greenwich 280
Islington 230
Hackney 280
Lambeth 300
Wimbledon 70
Hampstead 60
Kensington 150
Chelsea 60
@England 2500
@Cornwall 250
@Lancashire 250
@Essex 120
@Devon 120
@Surrey 100
"""),
    ("scotland", "Scottish", "Scotland", 36, "scottish:75 english:15 irish~:10", "uk", """
Glasgow 630
Edinburgh 520
Aberdeen 200
Dundee 150
Paisley 77
Greenock 45
Inverness 47
Stirling 37
Kilmarnock 46
Motherwell 32
Falkirk 35
Dumfries 33
Kirkcaldy 50
Dunfermline 50
Arbroath 23
@Scotland 600
"""),
    ("wales", "Welsh", "Wales", 36, "welsh:80 english:20", "uk", """
Cardiff 360
Swansea 245
Newport 150
Wrexham 65
Llanelli 26
Bangor 18
Aberystwyth 13
Pontypridd 30
Carmarthen 15
@Wales 250
"""),
    ("ireland", "Irish", "Ireland", 36, "irish:90 english:5 scottish:5", "uk", """
Dublin 1200
Cork 210
Limerick 95
Galway 80
Waterford 53
Kilkenny 26
Sligo 20
Drogheda 40
Dundalk 39
Wexford 20
Tralee 23
Belfast 340 Northern Ireland
Derry 85 Northern Ireland
Armagh 15 Northern Ireland
Lisburn 45 Northern Ireland
Newry 27 Northern Ireland
@Ireland 500
"""),
    ("usa", "American", "United States", 26, "english:55 irish~:12 german~:10 italian:7 yiddish:5 scottish:5 polish~:3 spanish~:3", "us", """
Chicago 2700 Illinois
Philadelphia 1600 Pennsylvania
Boston 680 Massachusetts
Brooklyn 2600 New York
Manhattan 1600 New York
Detroit 640 Michigan
Baltimore 580 Maryland
Cleveland 370 Ohio
Pittsburgh 300 Pennsylvania
Cincinnati 310 Ohio
Atlanta 500 Georgia
Seattle 740 Washington
Houston 2300 Texas
Dallas 1300 Texas
Denver 710 Colorado
Milwaukee 570 Wisconsin
Minneapolis 430 Minnesota
Portland 650 Oregon
Buffalo 280 New York
Rochester 210 New York
Providence 190 Rhode Island
Richmond 230 Virginia
Nashville 690 Tennessee
Memphis 630 Tennessee
Louisville 620 Kentucky
Indianapolis 880 Indiana
Columbus 900 Ohio
Omaha 480 Nebraska
Hartford 120 Connecticut
Newark 310 New Jersey
Honolulu 350 Hawaii
Oakland 430 California
Sacramento 520 California
Tacoma 220 Washington
Spokane 230 Washington
Albany 100 New York
Syracuse 145 New York
Dayton 140 Ohio
Akron 190 Ohio
Scranton 76 Pennsylvania
Toledo 270 Ohio
Phoenix 1600 Arizona
Tucson 540 Arizona
Miami 450 Florida
Tampa 400 Florida
Jacksonville 950 Florida
Savannah 147 Georgia
Charleston 150 South Carolina
Knoxville 190 Tennessee
Chattanooga 180 Tennessee
Lexington 320 Kentucky
Springfield 155 Illinois
Peoria 113 Illinois
Evanston 75 Illinois
Hoboken 60 New Jersey
Trenton 90 New Jersey
Camden 71 New Jersey
Wilmington 70 Delaware
Annapolis 40 Maryland
Norfolk 240 Virginia
Greensboro 300 North Carolina
Tulsa 410 Oklahoma
Wichita 400 Kansas
Topeka 125 Kansas
Shreveport 180 Louisiana
Galveston 50 Texas
Amarillo 200 Texas
Albuquerque 560 New Mexico
Boise 235 Idaho
Reno 260 Nevada
Anchorage 290 Alaska
Fresno 540 California
Pasadena 140 California
Berkeley 120 California
Stockton 320 California
Hollywood 200 California
Duluth 86 Minnesota
Fargo 125 North Dakota
Cheyenne 65 Wyoming
Provo 115 Utah
Ogden 87 Utah
Flint 80 Michigan
Lansing 112 Michigan
Kalamazoo 75 Michigan
Bloomington 85 Indiana
Salem 175 Oregon
Burlington 45 Vermont
Concord 44 New Hampshire
Bridgeport 148 Connecticut
Waterbury 115 Connecticut
Yonkers 200 New York
Ithaca 32 New York
Poughkeepsie 32 New York
Allentown 125 Pennsylvania
Harrisburg 50 Pennsylvania
Erie 95 Pennsylvania
Youngstown 60 Ohio
Canton 70 Ohio
Evansville 117 Indiana
Biloxi 46 Mississippi
Tallahassee 196 Florida
Pensacola 54 Florida
Macon 150 Georgia
@California 900
@Ohio 350
@Texas 400
@Maine 100
@Pennsylvania 400
@Virginia 250
@Massachusetts 250
@Illinois 300
@Michigan 250
@Kentucky 150
@Tennessee 150
@Iowa 150
@Kansas 100
@Missouri 150
@Wisconsin 180
@Minnesota 150
@Oregon 100
@Alabama 120
@Mississippi 100
@Louisiana 120
@Connecticut 120
@Vermont 50
@Nebraska 80
@Oklahoma 100
@Arkansas 70
@Colorado 100
@Utah 70
@Montana 50
@Idaho 40
@Nevada 40
@Arizona 70
@Florida 200
@Maryland 100
@Delaware 30
@Hawaii 50
@Alaska 30
@Wyoming 20
"""),
    ("canada", "Canadian", "Canada", 30, "english:50 scottish:15 french:22 irish~:6 ukrainian:4 italian:3", "us", """
Toronto 2800 Ontario
Montreal 1800 Quebec
Vancouver 680 British Columbia
Winnipeg 750 Manitoba
Ottawa 1000 Ontario
Calgary 1300 Alberta
Edmonton 1000 Alberta
Saskatoon 270 Saskatchewan
Windsor 230 Ontario
Sudbury 165 Ontario
Moncton 80 New Brunswick
Fredericton 60 New Brunswick
Charlottetown 40 Prince Edward Island
Sherbrooke 170 Quebec
Laval 440 Quebec
Kitchener 260 Ontario
Guelph 140 Ontario
Oshawa 170 Ontario
Brantford 100 Ontario
Lethbridge 100 Alberta
Kamloops 100 British Columbia
Nanaimo 100 British Columbia
Halifax 440 Nova Scotia
@Ontario 250
@Quebec 250
@Alberta 80
@Manitoba 60
@Saskatchewan 60
@Canada 250
"""),
    ("australia", "Australian", "Australia", 30, "english:68 scottish:12 irish~:12 italian:4 greek:4", "uk", """
Sydney 5300 New South Wales
Melbourne 5000 Victoria
Brisbane 2500 Queensland
Adelaide 1400 South Australia
Perth 2100 Western Australia
Hobart 250 Tasmania
Geelong 270 Victoria
Ballarat 110 Victoria
Bendigo 100 Victoria
Launceston 90 Tasmania
Darwin 150 Northern Territory
Canberra 450
Wollongong 300 New South Wales
Townsville 180 Queensland
Toowoomba 140 Queensland
Cairns 150 Queensland
Rockhampton 80 Queensland
Goulburn 24 New South Wales
Fremantle 30 Western Australia
Parramatta 30 New South Wales
@Australia 400
@Queensland 80
@Tasmania 50
"""),
    ("new_zealand", "New Zealand", "New Zealand", 30, "english:70 scottish:22 irish~:8", "uk", """
Auckland 1700
Wellington 420
Christchurch 380
Dunedin 130
Napier 65
Invercargill 55
Timaru 29
Whanganui 40
Rotorua 58
Gisborne 37
"""),
    ("france", "French", "France", 20, "french:100", "uk", """
Paris 2100
Lyon 520
Marseille 870
Bordeaux 260
Toulouse 490
Lille 230
Nantes 310
Strasbourg 280
Nice 340
Rouen 110
Rennes 220
Reims 180
Montpellier 290
Grenoble 160
Dijon 160
Tours 136
Angers 155
Metz 117
Limoges 130
Amiens 133
Orleans 116
Caen 105
Brest 140
Toulon 170
Avignon 92
Besancon 117
Perpignan 120
Nimes 150
Calais 73
Versailles 85
Mulhouse 110
Poitiers 88
Bayonne 52
Chartres 38
Cannes 74
Ajaccio 70
@France 400
@Brittany 50
@Normandy 50
@Alsace 50
"""),
    ("belgium", "Belgian", "Belgium", 18, "french:50 dutch:50", "uk", """
Brussels 1200
Antwerp 530
Ghent 260
Bruges 118
Liege 197
Leuven 100
Namur 110
Charleroi 200
Mechelen 86
Ostend 71
@Belgium 120
"""),
    ("switzerland", "Swiss", "Switzerland", 18, "german:60 french:30 italian:10", "uk", """
Zurich 420
Geneva 200
Basel 170
Bern 134
Lausanne 140
Lucerne 82
Lugano 63
Winterthur 110
@Switzerland 120
"""),
    ("germany", "German", "Germany", 16, "german:100", "uk", """
Berlin 3600
Hamburg 1800
Munich 1500
Cologne 1080
Frankfurt 750
Stuttgart 630
Dresden 550
Leipzig 590
Hanover 530
Bremen 560
Dortmund 590
Essen 580
Nuremberg 510
Bonn 330
Mainz 217
Kiel 246
Rostock 208
Potsdam 180
Magdeburg 236
Wiesbaden 278
Augsburg 296
Freiburg 230
Heidelberg 160
Karlsruhe 310
Mannheim 310
Erfurt 213
Weimar 65
Chemnitz 245
Duisburg 500
Bochum 365
Wuppertal 355
Bielefeld 333
Munster 315
Aachen 250
Brunswick 250
Kassel 200
Regensburg 150
Wurzburg 127
Ulm 126
Lubeck 217
Gottingen 118
Darmstadt 160
Trier 110
Koblenz 113
Oldenburg 170
Osnabruck 165
Jena 110
Dusseldorf 620
Konigsberg 300
@Germany 500
@Bavaria 120
@Saxony 60
@Prussia 80
@Westphalia 30
@Silesia 40
"""),
    ("austria", "Austrian", "Austria", 18, "german:90 czech:5 hungarian:5", "uk", """
Vienna 1900
Graz 290
Linz 205
Salzburg 155
Innsbruck 130
Klagenfurt 100
Villach 62
@Austria 200
"""),
    ("netherlands", "Dutch", "Netherlands", 18, "dutch:100", "uk", """
Amsterdam 870
Rotterdam 650
Utrecht 360
Leiden 125
Haarlem 160
Groningen 230
Eindhoven 235
Delft 100
Nijmegen 175
Arnhem 160
Maastricht 120
Tilburg 220
Breda 185
Zwolle 130
Dordrecht 120
Leeuwarden 125
@Netherlands 200
"""),
    ("italy", "Italian", "Italy", 16, "italian:100", "uk", """
Rome 2800
Milan 1400
Naples 960
Turin 870
Florence 380
Venice 260
Genoa 580
Bologna 390
Palermo 660
Bari 320
Catania 310
Verona 260
Padua 210
Trieste 200
Parma 195
Modena 185
Pisa 90
Siena 54
Messina 230
Brescia 196
Bergamo 120
Livorno 157
Ferrara 132
Ravenna 158
Lucca 89
Cagliari 150
Salerno 133
Cremona 72
Mantua 50
Vicenza 112
Taranto 195
@Italy 300
@Sicily 120
@Sardinia 40
@Tuscany 40
"""),
    ("spain", "Spanish", "Spain", 14, "spanish:100", "uk", """
Madrid 3300
Barcelona 1600
Seville 690
Valencia 790
Bilbao 345
Zaragoza 670
Malaga 570
Granada 230
Valladolid 300
Salamanca 145
Oviedo 220
Cadiz 116
Murcia 450
Cordoba 325
Alicante 330
Pamplona 200
Santander 172
Burgos 175
Girona 100
Tarragona 130
Vigo 295
Gijon 270
Badajoz 150
@Spain 250
@Catalonia 60
@Galicia 40
@Andalusia 40
"""),
    ("portugal", "Portuguese", "Portugal", 14, "portuguese:100", "uk", """
Lisbon 545
Porto 240
Coimbra 140
Braga 190
Funchal 110
Faro 60
Evora 57
Setubal 120
Aveiro 78
@Portugal 150
@Azores 30
"""),
    ("brazil", "Brazilian", "Brazil", 8, "portuguese:85 italian:10 german~:5", "uk", """
Recife 1650
Curitiba 1900
Fortaleza 2700
Manaus 2200
Belem 1500
Campinas 1200
Niteroi 500
Brasilia 3000
Goiania 1500
Florianopolis 500
Maceio 1000
@Brazil 300
"""),
    ("mexico", "Mexican", "Mexico", 8, "spanish:100", "uk", """
Guadalajara 1500
Monterrey 1100
Puebla 1600
Veracruz 600
Oaxaca 270
Tijuana 1900
Acapulco 800
Merida 900
Chihuahua 900
Zacatecas 150
Morelia 750
Queretaro 800
Tampico 300
@Mexico 500
"""),
    ("argentina", "Argentine", "Argentina", 8, "spanish:75 italian:25", "uk", """
Rosario 950
Tucuman 550
Salta 530
Corrientes 350
Parana 250
@Argentina 300
"""),
    ("chile", "Chilean", "Chile", 8, "spanish:100", "uk", """
Santiago 5600
Valparaiso 300
Concepcion 220
Antofagasta 360
Temuco 280
@Chile 100
"""),
    ("peru", "Peruvian", "Peru", 8, "spanish:100", "uk", """
Lima 9700
Arequipa 1000
Cusco 430
@Peru 80
"""),
    ("colombia", "Colombian", "Colombia", 8, "spanish:100", "uk", """
Bogota 7400
Medellin 2500
Cartagena 900
Barranquilla 1200
@Colombia 100
"""),
    ("venezuela", "Venezuelan", "Venezuela", 8, "spanish:100", "uk", """
Caracas 2000
Maracaibo 1600
@Venezuela 80
"""),
    ("cuba", "Cuban", "Cuba", 8, "spanish:100", "uk", """
Havana 2100
Matanzas 150
Camaguey 320
@Cuba 120
"""),
    ("uruguay", "Uruguayan", "Uruguay", 8, "spanish:80 italian:20", "uk", """
Montevideo 1300
@Uruguay 50
"""),
    ("sweden", "Swedish", "Sweden", 16, "swedish:100", "uk", """
Stockholm 980
Gothenburg 580
Malmo 350
Uppsala 170
Linkoping 115
Orebro 125
Vasteras 125
Norrkoping 95
Helsingborg 110
Umea 90
Sundsvall 50
Kalmar 40
@Sweden 150
"""),
    ("norway", "Norwegian", "Norway", 16, "norwegian:100", "uk", """
Oslo 700
Bergen 285
Trondheim 200
Stavanger 145
Drammen 100
Kristiansand 110
Tromso 77
Fredrikstad 83
@Norway 150
"""),
    ("denmark", "Danish", "Denmark", 16, "danish:100", "uk", """
Copenhagen 800
Aarhus 290
Odense 180
Aalborg 120
Esbjerg 72
Randers 62
@Denmark 120
"""),
    ("finland", "Finnish", "Finland", 16, "finnish:100", "uk", """
Helsinki 650
Tampere 240
Turku 195
Oulu 210
Espoo 290
Vaasa 67
@Finland 100
"""),
    ("iceland", "Icelandic", "Iceland", 16, "icelandic:100", "uk", """
Reykjavik 130
Akureyri 19
@Iceland 40
"""),
    ("poland", "Polish", "Poland", 12, "polish:100", "uk", """
Warsaw 1800
Krakow 780
Lodz 670
Poznan 530
Gdansk 470
Wroclaw 640
Lublin 340
Szczecin 400
Katowice 290
Bydgoszcz 340
Torun 200
Czestochowa 220
Bialystok 300
Gdynia 245
Radom 210
Rzeszow 195
Opole 127
@Poland 250
"""),
    ("czechia", "Czech", "Czech Republic", 12, "czech:100", "uk", """
Prague 1300
Brno 380
Ostrava 285
Plzen 170
Olomouc 100
Liberec 104
@Bohemia 60
@Moravia 40
@Czechoslovakia 80
"""),
    ("slovakia", "Slovak", "Slovakia", 12, "czech:70 hungarian:30", "uk", """
Bratislava 430
Kosice 230
Zilina 80
@Slovakia 40
"""),
    ("hungary", "Hungarian", "Hungary", 12, "hungarian:100", "uk", """
Budapest 1750
Debrecen 200
Szeged 160
Miskolc 155
Pecs 142
Gyor 130
@Hungary 150
"""),
    ("romania", "Romanian", "Romania", 10, "romanian:90 hungarian:10", "uk", """
Bucharest 1800
Iasi 290
Timisoara 320
Constanta 280
Brasov 250
Craiova 270
Galati 250
Sibiu 150
Oradea 200
@Romania 150
"""),
    ("bulgaria", "Bulgarian", "Bulgaria", 10, "bulgarian:100", "uk", """
Sofia 1300
Plovdiv 340
Varna 335
Burgas 200
Ruse 145
@Bulgaria 80
"""),
    ("serbia", "Serbian", "Serbia", 10, "south_slavic:100", "uk", """
Belgrade 1200
Kragujevac 150
Subotica 100
@Serbia 80
@Yugoslavia 100
"""),
    ("croatia", "Croatian", "Croatia", 10, "south_slavic:100", "uk", """
Zagreb 770
Split 180
Rijeka 130
Osijek 108
Zadar 75
Dubrovnik 42
@Croatia 60
"""),
    ("bosnia", "Bosnian", "Bosnia", 10, "south_slavic:100", "uk", """
Sarajevo 275
Mostar 105
Tuzla 110
@Bosnia 40
"""),
    ("slovenia", "Slovenian", "Slovenia", 10, "south_slavic:100", "uk", """
Ljubljana 290
Maribor 95
@Slovenia 30
"""),
    ("macedonia", "Macedonian", "Macedonia", 10, "south_slavic:100", "uk", """
Skopje 530
Bitola 75
"""),
    ("greece", "Greek", "Greece", 12, "greek:100", "uk", """
Athens 660
Thessaloniki 320
Patras 170
Piraeus 165
Heraklion 175
Larissa 145
Volos 86
Ioannina 65
Corfu 32
@Greece 150
@Crete 50
"""),
    ("cyprus", "Cypriot", "Cyprus", 12, "greek:80 turkish:20", "uk", """
Nicosia 200
Larnaca 85
@Cyprus 50
"""),
    ("russia", "Russian", "Russia", 9, "russian:100", "uk", """
Moscow 12500
Leningrad 1000
Novosibirsk 1600
Yekaterinburg 1500
Kazan 1250
Samara 1150
Omsk 1150
Ufa 1100
Volgograd 1000
Perm 1050
Voronezh 1050
Saratov 830
Tula 470
Irkutsk 620
Vladivostok 600
Yaroslavl 600
Smolensk 320
Kaliningrad 490
Murmansk 280
Tver 410
Astrakhan 470
@Russia 400
@Siberia 80
"""),
    ("ukraine", "Ukrainian", "Ukraine", 9, "ukrainian:80 russian:20", "uk", """
Kiev 2900
Kharkiv 1400
Odessa 1000
Lviv 720
Dnipro 990
Donetsk 900
Zaporizhzhia 720
Poltava 280
Chernihiv 285
@Ukraine 150
"""),
    ("belarus", "Belarusian", "Belarus", 9, "russian:100", "uk", """
Minsk 2000
Gomel 510
Vitebsk 360
Grodno 370
@Belarus 50
"""),
    ("latvia", "Latvian", "Latvia", 9, "latvian:100", "uk", """
Riga 600
Daugavpils 80
@Latvia 40
"""),
    ("lithuania", "Lithuanian", "Lithuania", 9, "lithuanian:100", "uk", """
Vilnius 580
Kaunas 300
Klaipeda 150
@Lithuania 50
"""),
    ("estonia", "Estonian", "Estonia", 9, "estonian:100", "uk", """
Tallinn 440
Tartu 95
@Estonia 40
"""),
    ("georgia", "Georgian", "Georgia", 9, "georgian:100", "uk", """
Tbilisi 1100
Kutaisi 150
Batumi 170
"""),
    ("armenia", "Armenian", "Armenia", 9, "armenian:100", "uk", """
Yerevan 1080
Gyumri 120
@Armenia 80
"""),
    ("azerbaijan", "Azerbaijani", "Azerbaijan", 9, "azerbaijani:100", "uk", """
Baku 2300
Ganja 330
"""),
    ("turkey", "Turkish", "Turkey", 6, "turkish:100", "uk", """
Istanbul 15000
Ankara 5600
Izmir 4300
Bursa 3000
Adana 2200
Konya 2200
Trabzon 800
Antalya 2500
Gaziantep 2100
Samsun 1300
Eskisehir 900
@Turkey 150
"""),
    ("lebanon", "Lebanese", "Lebanon", 8, "arabic:100", "uk", """
Beirut 2200
Tripoli 730
Sidon 160
Tyre 60
Zahle 120
Byblos 40
@Lebanon 150
"""),
    ("syria", "Syrian", "Syria", 6, "arabic:100", "uk", """
Damascus 2000
Aleppo 2000
Homs 800
Latakia 400
@Syria 80
"""),
    ("egypt", "Egyptian", "Egypt", 5, "arabic:100", "uk", """
Cairo 9500
Alexandria 5200
Giza 4000
Luxor 500
Aswan 290
Suez 700
Mansoura 500
Tanta 430
@Egypt 150
"""),
    ("iraq", "Iraqi", "Iraq", 5, "arabic:100", "uk", """
Baghdad 7000
Basra 1300
Mosul 1700
Erbil 900
Kirkuk 1000
Najaf 700
@Iraq 80
"""),
    ("iran", "Iranian", "Iran", 5, "persian:100", "uk", """
Tehran 8700
Isfahan 2000
Tabriz 1600
Shiraz 1600
Mashhad 3000
Qom 1200
Rasht 700
Kermanshah 950
@Iran 150
"""),
    ("israel", "Israeli", "Israel", 8, "hebrew:100", "uk", """
Jerusalem 950
Haifa 285
Nazareth 77
Jaffa 50
@Israel 100
"""),
    ("palestine", "Palestinian", "Palestine", 6, "arabic:100", "uk", """
Gaza 600
Hebron 200
Ramallah 40
Bethlehem 30
@Palestine 60
"""),
    ("jordan", "Jordanian", "Jordan", 6, "arabic:100", "uk", """
Amman 4000
Irbid 500
Zarqa 600
"""),
    ("saudi", "Saudi", "Saudi Arabia", 4, "arabic:100", "uk", """
Riyadh 7000
Jeddah 4000
Mecca 2000
"""),
    ("uae", "Emirati", "United Arab Emirates", 4, "arabic:100", "uk", """
Dubai 3300
"""),
    ("qatar", "Qatari", "Qatar", 4, "arabic:100", "uk", """
Doha 1200
"""),
    ("bahrain", "Bahraini", "Bahrain", 4, "arabic:100", "uk", """
Manama 400
"""),
    ("oman", "Omani", "Oman", 4, "arabic:100", "uk", """
Muscat 1300
"""),
    ("kuwait", "Kuwaiti", "Kuwait", 4, "arabic:100", "uk", """
Kuwait 3000
"""),
    ("algeria", "Algerian", "Algeria", 6, "maghrebi:100", "uk", """
Algiers 3400
Oran 850
@Algeria 100
"""),
    ("tunisia", "Tunisian", "Tunisia", 6, "maghrebi:100", "uk", """
Tunis 1000
Sfax 330
"""),
    ("morocco", "Moroccan", "Morocco", 6, "maghrebi:100", "uk", """
Casablanca 3300
Rabat 580
Marrakesh 900
Fez 1100
Tangier 950
@Morocco 100
"""),
    ("libya", "Libyan", "Libya", 6, "maghrebi:100", "uk", """
Benghazi 630
@Libya 40
"""),
    ("india", "Indian", "India", 5, "indian:100", "uk", """
Mumbai 12400
Delhi 11000
Kolkata 4500
Chennai 4600
Bangalore 8400
Hyderabad 6800
Pune 3100
Lucknow 2800
Kanpur 2700
Jaipur 3000
Ahmedabad 5600
Patna 1700
Amritsar 1100
Nagpur 2400
Indore 1900
Bhopal 1800
Surat 4500
Varanasi 1200
Allahabad 1100
Mysore 900
Kochi 600
Coimbatore 1050
Madurai 1000
Mangalore 500
Shimla 170
Dehradun 570
Srinagar 1200
Chandigarh 1000
@Goa 100
@Kerala 100
@Punjab 150
@Bengal 100
@Gujarat 60
@India 400
"""),
    ("pakistan", "Pakistani", "Pakistan", 5, "pakistani:100", "uk", """
Karachi 15000
Lahore 11000
Rawalpindi 2100
Peshawar 2000
Faisalabad 3200
Multan 1900
Quetta 1000
Sialkot 650
Islamabad 1000
@Pakistan 150
"""),
    ("bangladesh", "Bangladeshi", "Bangladesh", 5, "bengali:100", "uk", """
Dhaka 8900
Chittagong 2600
Sylhet 530
@Bangladesh 60
"""),
    ("sri_lanka", "Sri Lankan", "Sri Lanka", 6, "sinhala:100", "uk", """
Colombo 750
Kandy 125
Jaffna 90
"""),
    ("nepal", "Nepalese", "Nepal", 5, "indian:100", "uk", """
Kathmandu 1000
@Nepal 50
"""),
    ("japan", "Japanese", "Japan", 5, "japanese:100", "uk", """
Tokyo 14000
Osaka 2700
Kyoto 1460
Yokohama 3700
Nagoya 2300
Kobe 1500
Hiroshima 1200
Sapporo 1970
Fukuoka 1600
Sendai 1090
Nagasaki 400
Kawasaki 1500
Niigata 780
Kagoshima 590
Kumamoto 740
Okayama 720
Shizuoka 690
Kanazawa 460
Hakodate 250
Yokosuka 390
@Japan 200
@Okinawa 60
@Hokkaido 50
"""),
    ("china", "Chinese", "China", 3, "chinese:100", "uk", """
Beijing 21500
Shanghai 24000
Guangzhou 15000
Tianjin 13000
Wuhan 11000
Nanjing 8500
Chongqing 16000
Chengdu 16000
Hangzhou 10000
Shenyang 8000
Harbin 10000
Xiamen 4000
Qingdao 9000
Suzhou 10000
Kunming 6000
Changsha 8000
Fuzhou 7000
@China 300
"""),
    ("hong_kong", "Hong Kong", "Hong Kong", 5, "cantonese:100", "uk", """
Kowloon 2000
"""),
    ("macau", "Macanese", "Macau", 5, "cantonese:80 portuguese:20", "uk", """
Macau 680
"""),
    ("taiwan", "Taiwanese", "Taiwan", 5, "taiwanese:100", "uk", """
Taipei 2600
Kaohsiung 2700
Tainan 1800
Taichung 2800
@Taiwan 150
"""),
    ("korea", "South Korean", "South Korea", 5, "korean:100", "uk", """
Seoul 9700
Busan 3400
Incheon 2900
Daegu 2400
Daejeon 1500
Gwangju 1450
Ulsan 1100
Suwon 1200
@Korea 150
"""),
    ("north_korea", "North Korean", "North Korea", 5, "korean:100", "uk", """
Pyongyang 3000
Hamhung 700
"""),
    ("vietnam", "Vietnamese", "Vietnam", 5, "vietnamese:100", "uk", """
Hanoi 8000
Haiphong 2000
Saigon 9000
@Vietnam 100
"""),
    ("philippines", "Filipino", "Philippines", 5, "filipino:100", "uk", """
Manila 1800
Cebu 950
Davao 1800
Iloilo 450
@Philippines 150
"""),
    ("thailand", "Thai", "Thailand", 5, "thai:100", "uk", """
Bangkok 10000
@Thailand 80
"""),
    ("indonesia", "Indonesian", "Indonesia", 4, "indonesian:100", "uk", """
Jakarta 10500
Surabaya 2900
Bandung 2500
Medan 2400
Semarang 1600
Yogyakarta 400
@Indonesia 100
"""),
    ("malaysia", "Malaysian", "Malaysia", 6, "malay:60 chinese:30 indian:10", "uk", """
Penang 700
Ipoh 700
Malacca 500
@Malaysia 80
"""),
    ("singapore", "Singaporean", "Singapore", 6, "chinese:75 malay:15 indian:10", "uk", """
Singapore 5600
"""),
    ("nigeria", "Nigerian", "Nigeria", 4, "nigerian:100", "uk", """
Lagos 15000
Ibadan 3500
Kano 4000
Abuja 3600
Enugu 800
Kaduna 1600
Onitsha 1500
Calabar 470
Abeokuta 500
@Nigeria 200
"""),
    ("ghana", "Ghanaian", "Ghana", 6, "ghanaian:100", "uk", """
Accra 2500
Kumasi 3300
Tamale 370
@Ghana 100
"""),
    ("kenya", "Kenyan", "Kenya", 6, "east_african:100", "uk", """
Nairobi 4400
Mombasa 1200
Kisumu 400
Nakuru 570
@Kenya 100
"""),
    ("uganda", "Ugandan", "Uganda", 6, "east_african:100", "uk", """
Kampala 1700
Entebbe 80
@Uganda 60
"""),
    ("tanzania", "Tanzanian", "Tanzania", 6, "east_african:100", "uk", """
Zanzibar 700
Arusha 600
@Tanzania 60
"""),
    ("south_africa", "South African", "South Africa", 10, "english:35 afrikaans:35 southern_african:30", "uk", """
Johannesburg 5600
Durban 3400
Pretoria 2500
Soweto 1300
Bloemfontein 550
Kimberley 220
Pietermaritzburg 600
Stellenbosch 150
@Transvaal 50
"""),
    ("zimbabwe", "Zimbabwean", "Zimbabwe", 6, "southern_african:80 english:20", "uk", """
Harare 1500
Bulawayo 650
@Rhodesia 40
@Zimbabwe 60
"""),
    ("zambia", "Zambian", "Zambia", 6, "southern_african:100", "uk", """
Lusaka 2500
Ndola 500
@Zambia 40
"""),
    ("ethiopia", "Ethiopian", "Ethiopia", 5, "ethiopian:100", "uk", """
Gondar 350
Mekelle 300
@Ethiopia 80
"""),
    ("sudan", "Sudanese", "Sudan", 4, "arabic:100", "uk", """
Khartoum 2600
Omdurman 2400
@Sudan 50
"""),
    ("senegal", "Senegalese", "Senegal", 6, "francophone_african:100", "uk", """
Dakar 1100
@Senegal 50
"""),
    ("cameroon", "Cameroonian", "Cameroon", 5, "francophone_african:100", "uk", """
Douala 3000
Yaounde 2700
@Cameroon 50
"""),
    ("congo", "Congolese", "Congo", 3, "francophone_african:100", "uk", """
Kinshasa 14000
Lubumbashi 2000
@Congo 60
"""),
    ("jamaica", "Jamaican", "Jamaica", 12, "english:85 irish~:10 scottish:5", "uk", """
Kingston 1200
@Jamaica 150
"""),
    ("trinidad", "Trinidadian", "Trinidad", 10, "english:75 indian:25", "uk", """
@Trinidad 80
"""),
    ("barbados", "Barbadian", "Barbados", 10, "english:100", "uk", """
Bridgetown 100
@Barbados 60
"""),
    ("bahamas", "Bahamian", "Bahamas", 10, "english:100", "uk", """
Nassau 270
"""),
    ("guyana", "Guyanese", "Guyana", 10, "english:70 indian:30", "uk", """
Georgetown 120
@Guyana 40
"""),
    ("bermuda", "Bermudian", "Bermuda", 10, "english:100", "uk", """
@Bermuda 30
"""),
]

# The most often named birthplaces, in order (our own judgement of English-language
# biographies); every other place is ranked after these by factor x sqrt(population).
HEAD_PLACES = """London Paris Chicago Sydney Melbourne Toronto Dublin Glasgow Philadelphia
Boston England Berlin Vienna Montreal Brooklyn Manchester Liverpool Birmingham Edinburgh
Rome"""

# --------------------------------------------------------------------------
# Occupations by field ("|" separates entries that contain spaces).
# --------------------------------------------------------------------------
JOBS = {
    "arts": "painter|sculptor|illustrator|photographer|architect|printmaker|cartoonist|designer",
    "letters": "novelist|poet|journalist|playwright|essayist|historian|translator|critic|writer",
    "music": "composer|pianist|violinist|conductor|singer|organist|guitarist|jazz musician",
    "stage": "actor|film director|screenwriter|dancer|comedian|theatre director",
    "sport": "footballer|cricketer|boxer|cyclist|rugby player|athlete|swimmer|tennis player",
    "science": "physicist|chemist|mathematician|botanist|engineer|astronomer|geologist|economist",
    "public": "politician|diplomat|lawyer|judge|civil servant|trade unionist",
    "faith": "bishop|priest|theologian|missionary",
    "health": "physician|surgeon|nurse|psychiatrist",
    "business": "businessman|banker|industrialist|publisher|merchant",
    "military": "army officer|naval officer|aviator",
}
JOB_FIELD_WEIGHTS = ("arts:12 letters:14 music:12 stage:10 sport:16 science:12 public:12 "
                     "faith:4 health:4 business:6 military:4")

# Institutions named after a (distractor) place, by field.
INSTITUTIONS = {
    "arts": "the {X} Academy of Fine Arts|the {X} School of Art|the University of {X}",
    "letters": "the University of {X}|{X} University|{X} College",
    "music": "the {X} Conservatory|the {X} Academy of Music|the University of {X}",
    "stage": "the {X} Academy of Dramatic Art|the {X} Drama School|the University of {X}",
    "sport": "{X} College|the University of {X}",
    "science": "the University of {X}|{X} University|the {X} Institute of Technology",
    "public": "the University of {X}|{X} University|{X} Law School",
    "faith": "the {X} Seminary|the University of {X}",
    "health": "the {X} School of Medicine|the University of {X}",
    "business": "the {X} School of Economics|the University of {X}|{X} College",
    "military": "the {X} Military Academy|the {X} Naval College",
}

CLUBS = "{X} City|{X} United|{X} Rovers|{X} Athletic|FC {X}|Sporting {X}|{X} Wanderers"

PARENT_JOBS = """schoolteacher|local merchant|railway clerk|farmer|physician|shopkeeper|
coal miner|tailor|carpenter|civil servant|lawyer|sea captain|textile worker|church organist|
bank clerk|factory worker|music teacher|blacksmith|printer|watchmaker"""

FAMILY_TRADES = """farmers|merchants|musicians|fishermen|teachers|craftsmen|miners|weavers|
doctors|clergymen|printers|bakers|sailors|lawyers"""

SCHOOLS = """the local grammar school|a Jesuit school|the village school|a boarding school|
the local academy|a convent school|the cathedral school|a state school"""

MEMBERSHIPS = """the Royal Society|a national academy of sciences|a local arts society|
a trade union|the city council|a learned society|a rowing club|a chess club"""

NUMBER_WORDS = "two three four five six seven eight nine ten eleven twelve".split()
ORDINALS = "second third fourth fifth sixth seventh eighth".split()
MONTHS = ("January February March April May June July August September October "
          "November December").split()

# --------------------------------------------------------------------------
# The small "demo" world: 50 well-known cities in rank order, a small pool of
# short given names, a few short occupations.
# --------------------------------------------------------------------------
DEMO_PLACES = """London Paris Chicago Sydney Berlin Toronto Dublin Glasgow Boston Melbourne
Rome Vienna Madrid Moscow Tokyo Philadelphia Manchester Liverpool Amsterdam Brooklyn Montreal
Detroit Baltimore Edinburgh Birmingham Munich Hamburg Stockholm Copenhagen Oslo Prague
Budapest Warsaw Athens Lisbon Brussels Geneva Naples Cairo Mumbai Delhi Seoul Lagos Havana
Dallas Houston Seattle Cleveland Leeds Bristol"""

DEMO_GIVEN = """Ada Alan Anna Ben Carl Clara Dan Dora Ed Ella Emil Eva Finn Gus Hal Ida Ivan
Jack Jan Kai Lea Leo Lily Max Mia Nils Nora Otto Paul Rosa Ruth Sam Tess Tom Una Vera Walt
Zoe Amos Iris"""

DEMO_JOBS = """baker painter poet singer nurse farmer tailor judge pilot chef actor doctor
banker sailor teacher writer lawyer dancer potter weaver"""
